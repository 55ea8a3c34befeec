// An approval read by a raw statement, beside what its use case needs with it
// (the authority facts, the locks' results) in the same round trip.
import { Prisma, type Approval } from "../../db/generated/client.ts";

/**
 * The approval's columns in a raw SELECT over the alias `a`. A raw query hands
 * an enum array back in its text form, so allowedActions is also read as text[].
 */
export const APPROVAL_COLUMNS = Prisma.sql`a.*, a."allowedActions"::text[] AS "allowedActionsText"`;

/** The same, from a row `f` of an engine function that answers the approval as its column `approval`. */
export const FUNCTION_APPROVAL_COLUMNS = Prisma.sql`(f.approval).*, (f.approval)."allowedActions"::text[] AS "allowedActionsText"`;

export type ApprovalRow = Approval & { allowedActionsText: string[] };

/** The Approval in a row read with APPROVAL_COLUMNS, and the row's other columns. */
export function splitApprovalRow<Extra extends object>(row: ApprovalRow & Extra, extraKeys: readonly (keyof Extra)[]): { approval: Approval; extra: Extra } {
  const { allowedActionsText, ...columns } = row;
  const extra = {} as Extra;
  const approval = { ...columns, allowedActions: allowedActionsText } as Record<string, unknown>;
  for (const key of extraKeys) {
    (extra as Record<PropertyKey, unknown>)[key] = approval[key as string];
    delete approval[key as string];
  }
  return { approval: approval as unknown as Approval, extra };
}
