// npm run audit:verify: checks every workspace's audit log (the keyed chain,
// the last digest sealed outside the database, and every ended approval
// against its audit entry) with the server's configuration; exits 1 naming
// what is wrong. Runs against DATABASE_URL, or the embedded database in
// TOLLGATE_DATA_DIR while the server is stopped (one process opens it at a time).
import { auditDigestFile, parseEnv } from "../server/env.ts";
import { EventBus } from "../server/events/bus.ts";
import { openDatabase } from "../server/db/client.ts";
import { resolveServerSecret } from "../server/secret.ts";
import { verifyAudit } from "../server/services/audit.ts";
import { createServiceDeps } from "../server/services/deps.ts";

const env = parseEnv(process.env);
const secret = await resolveServerSecret({ configured: env.TOLLGATE_SECRET, dataDir: env.TOLLGATE_DATA_DIR });
const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.TOLLGATE_DATA_DIR, embeddedCacheMb: env.TOLLGATE_EMBEDDED_CACHE_MB, migrate: false });
const digestFile = auditDigestFile(env);
const deps = createServiceDeps(database, new EventBus(), { secret, auditDigests: { file: digestFile, sealEveryMs: env.TOLLGATE_AUDIT_SEAL_SECONDS * 1000 } });
let failed = 0;
try {
  const workspaces = await database.prisma.workspace.findMany({ select: { id: true, name: true }, orderBy: { createdAt: "asc" } });
  for (const workspace of workspaces) {
    const verdict = await verifyAudit(deps, workspace.id);
    if (verdict.ok) {
      console.log(`ok      ${workspace.id} (${workspace.name}): ${verdict.checked} entries`);
    } else {
      failed += 1;
      console.log(`BROKEN  ${workspace.id} (${workspace.name}) at entry ${verdict.brokenAtSeq}: ${verdict.reason}`);
    }
  }
  if (!digestFile) console.log("no digest file (TOLLGATE_AUDIT_DIGEST_FILE=off): deleting the newest entries or the whole log cannot be detected without a sealed digest");
} finally {
  await database.close();
}
process.exit(failed > 0 ? 1 : 0);
