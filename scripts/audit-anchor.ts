// npm run audit:anchor: anchors, with a keyed entry each, the audit chains that
// still hold entries in the unkeyed format of before and were not anchored by
// the server start that applied the upgrade (it died before it got there, or a
// chain was broken then and has since been restored from a backup). Only a
// chain that checks out from its start is anchored; run it only on a database
// you trust as it stands: an anchor vouches for every unkeyed entry before it.
// Runs against DATABASE_URL, or the embedded database in TOLLGATE_DATA_DIR
// while the server is stopped.
import { parseEnv } from "../server/env.ts";
import { EventBus } from "../server/events/bus.ts";
import { openDatabase } from "../server/db/client.ts";
import { resolveServerSecret } from "../server/secret.ts";
import { anchorUnkeyedChains } from "../server/services/audit-unkeyed-anchor.ts";
import { createServiceDeps } from "../server/services/deps.ts";

const env = parseEnv(process.env);
const secret = await resolveServerSecret({ configured: env.TOLLGATE_SECRET, dataDir: env.TOLLGATE_DATA_DIR });
const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.TOLLGATE_DATA_DIR, embeddedCacheMb: env.TOLLGATE_EMBEDDED_CACHE_MB, migrate: false });
try {
  const deps = createServiceDeps(database, new EventBus(), { secret });
  const anchored = await anchorUnkeyedChains(deps);
  console.log(anchored.length ? `anchored: ${anchored.join(", ")}` : "no chain needed an anchor (or each that did is broken: npm run audit:verify names where)");
} finally {
  await database.close();
}
