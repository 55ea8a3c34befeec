// A TypeScript script that a test starts as a process of its own (an agent,
// the MCP gateway, an MCP server), bundled once per worker by esbuild into
// plain JavaScript that Node runs without a loader. Its own sources (the
// script, the SDK's) are bundled; packages stay imports that Node resolves
// from the repository's node_modules, as a user's process resolves them
// (scripts/node-bundle.mjs, as `npm run build` bundles the server).
// Under `node --import tsx` every module a framework loads, thousands for
// LangChain or the Claude Agent SDK, passes through tsx's hooks: loading
// LangGraph, LangChain, OpenAI Agents, the Claude Agent SDK and the MCP SDK
// took 3.9 CPU-seconds that way and 2.0 without.
import { createHash } from "node:crypto";
import { mkdirSync, renameSync } from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";
import { NODE_BUNDLE } from "../scripts/node-bundle.mjs";

const repository = path.resolve(import.meta.dirname, "..");
/** Inside the repository, so that the bundles' package imports resolve from its node_modules. */
const OUT_DIR = path.join(repository, "node_modules/.cache/tollgate-test-scripts");

const bundled = new Map<string, string>();

/** The file to give `node` for `script`: a bundle of it when it is TypeScript, else the script itself. */
export function nodeScript(script: string): string {
  if (!/\.m?ts$/.test(script)) return script;
  let file = bundled.get(script);
  if (!file) {
    const name = `${path.basename(script).replace(/\.m?ts$/, "")}-${createHash("sha256").update(script).digest("hex").slice(0, 12)}`;
    file = path.join(OUT_DIR, `${name}.mjs`);
    // Written aside and renamed: another worker may be starting the same script.
    const written = path.join(OUT_DIR, `${name}.${process.pid}.mjs`);
    mkdirSync(OUT_DIR, { recursive: true });
    buildSync({
      ...NODE_BUNDLE,
      entryPoints: [script],
      outfile: written,
      // Error classes keep their names: the tests read them in the scripts' output.
      keepNames: true,
      logLevel: "error",
    });
    renameSync(written, file);
    bundled.set(script, file);
  }
  return file;
}
