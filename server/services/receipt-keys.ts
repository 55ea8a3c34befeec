// Rotating a workspace's receipt signing key, by an admin of that workspace,
// with its audit entry in the same transaction.
import type { OperatorPrincipal } from "../domain/principal.ts";
import type { ServiceDeps } from "./deps.ts";

/**
 * A new key signs the workspace's receipts from now on; the previous one stays
 * in the JWKS until the receipts it signed have expired. Other workspaces'
 * keys are untouched. Rate-limited (ROTATIONS_PER_HOUR, TOO_MANY_REQUESTS).
 */
export async function rotateReceiptKey(deps: ServiceDeps, admin: OperatorPrincipal) {
  const rotation = await deps.receipts.rotate(admin.workspaceId, (tx, { kid, retiredKids, rotatedAt }) =>
    deps.audit.append(tx,
      admin.workspaceId,
      {
        actor: { type: "operator", id: admin.operatorId, label: admin.email },
        action: "receipts.key_rotated",
        subjectType: "signing_key",
        subjectId: kid,
        data: { retiredKids },
      },
      rotatedAt,
    ),
  );
  return { kid: rotation.kid, retiredKids: rotation.retiredKids, rotatedAt: rotation.rotatedAt.toISOString() };
}
