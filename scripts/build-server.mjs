// Bundles the custom server (server/main.ts) into dist/server.mjs; npm packages stay external.
import { build } from "esbuild";
import { NODE_BUNDLE } from "./node-bundle.mjs";

await build({ ...NODE_BUNDLE, entryPoints: ["server/main.ts"], outfile: "dist/server.mjs", sourcemap: true, logLevel: "warning" });
