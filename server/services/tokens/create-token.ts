// A script token for an operator (`Authorization: Bearer <token>`): minted only
// with the operator's password again (counted by the login throttle, so a
// stolen browser session cannot be turned into a long-lived credential or
// used to guess the password), named, no longer-lived than the workspace
// allows, and shown once.
import { verify as argon2Verify } from "@node-rs/argon2";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { randomToken, sha256 } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf } from "./token-rows.ts";

export interface CreateTokenInput {
  name: string;
  /** Defaults to the workspace's cap, at most 30 days. */
  ttlHours?: number;
  password: string;
}

export async function createToken(deps: ServiceDeps, principal: OperatorPrincipal, input: CreateTokenInput, client: { address?: string } = {}) {
  const attempt = await deps.loginThrottle.reserve(principal.email, client.address);
  const [operator, workspace] = await Promise.all([
    deps.prisma.operator.findUniqueOrThrow({ where: { id: principal.operatorId }, select: { account: { select: { passwordHash: true } } } }),
    deps.prisma.workspace.findUniqueOrThrow({ where: { id: principal.workspaceId }, select: { maxTokenHours: true } }),
  ]);
  if (!(await argon2Verify(operator.account.passwordHash, input.password))) {
    throw new DomainError("FORBIDDEN", "the password is wrong: minting a token needs your password again", { field: "password" });
  }
  await attempt.succeeded();
  const ttlHours = input.ttlHours ?? Math.min(workspace.maxTokenHours, 720);
  if (ttlHours > workspace.maxTokenHours) {
    throw new DomainError("BAD_INPUT", `ttlHours: at most ${workspace.maxTokenHours} hours in this workspace (an admin sets the limit)`, { field: "ttlHours" });
  }

  const now = deps.now();
  const id = newId("ops");
  const token = randomToken("tgo");
  const expiresAt = new Date(now.getTime() + ttlHours * 3600_000);
  await deps.prisma.$transaction(async (tx) => {
    await tx.operatorSession.create({
      data: { id, workspaceId: principal.workspaceId, operatorId: principal.operatorId, kind: "TOKEN", name: input.name, tokenHash: sha256(token), createdAt: now, expiresAt },
    });
    await deps.audit.append(
      tx,
      principal.workspaceId,
      { actor: actorOf(principal), action: "operator.token_issued", subjectType: "operator", subjectId: principal.operatorId, data: { tokenId: id, name: input.name, expiresAt: expiresAt.toISOString() } },
      now,
    );
  });
  return { id, name: input.name, token, expiresAt: expiresAt.toISOString() };
}
