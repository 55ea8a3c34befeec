// What the token use cases share: the audit actor and a token as lists show it.
import type { OperatorPrincipal } from "../../domain/principal.ts";

export const actorOf = (principal: OperatorPrincipal) => ({ type: "operator" as const, id: principal.operatorId, label: principal.email });

export interface TokenRow {
  id: string;
  name: string | null;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  operator: { email: string };
}

export const tokenView = (row: TokenRow) => ({
  id: row.id,
  name: row.name ?? "(unnamed)",
  owner: row.operator.email,
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
  revokedAt: row.revokedAt?.toISOString() ?? null,
});
