// Bundles the custom server (server/main.ts) into dist/server.mjs, and the
// embedded database's thread (TOLLGATE_EMBEDDED_THREAD=worker) beside it into
// dist/database-thread.mjs; npm packages stay external.
import { build } from "esbuild";
import { NODE_BUNDLE } from "./node-bundle.mjs";

await build({ ...NODE_BUNDLE, entryPoints: ["server/main.ts"], outfile: "dist/server.mjs", sourcemap: true, logLevel: "warning" });
await build({ ...NODE_BUNDLE, entryPoints: ["server/db/database-thread/worker.ts"], outfile: "dist/database-thread.mjs", sourcemap: true, logLevel: "warning" });
