// Where a server's (or the load generator's) CPU time went, from a V8 CPU
// profile (node --cpu-prof, as BENCH_SERVER_NODE_ARGS="--cpu-prof
// --cpu-prof-dir=DIR" gives the benchmark's servers, or
// LOOP_CPU_GENERATOR_PROFILE=DIR in bench/loop-cpu.ts): self time by part (the
// embedded database's WebAssembly, garbage collection, Next.js, the database
// drivers, Node's fetch, the server's own code, ...) and the functions that
// took most. Profiles are relative: they stay meaningful on
// a loaded machine where absolute times do not.
//
//   npx tsx bench/profile-summary.ts DIR/*.cpuprofile
import { readFile } from "node:fs/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The part of the process a function belongs to, by its name and file. */
function partOf({ functionName, url }: ProfileNode["callFrame"]): string {
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "(idle)") return "idle";
  if (functionName === "(program)") return "V8 and native (program)";
  if (url.startsWith("wasm://") || /^\$?(func|wasm-function)/.test(functionName)) return "WebAssembly (PGlite's PostgreSQL, Prisma's query compiler)";
  if (url.includes("/next/")) return "Next.js";
  if (url.includes("pglite")) return "PGlite's JavaScript";
  if (url.includes("prisma")) return "Prisma";
  if (url.includes("socket.io") || url.includes("engine.io") || url.includes("/ws/")) return "socket.io";
  if (url.includes("@trpc")) return "tRPC";
  if (url.includes("/pg/") || url.includes("pg-protocol")) return "node-postgres";
  if (url.includes("internal/deps/undici")) return "Node's fetch (its bundled undici, web streams)";
  if (url.includes("/undici/")) return "undici (the package: the SDK's and the benchmark operator's HTTP)";
  if (url.startsWith("node:") || url === "") return "Node's own (HTTP, streams, timers)";
  if (url.includes("/sdk/src/")) return "the SDK";
  if (url.includes("/bench/")) return "the benchmark's own code";
  if (url.includes("node_modules")) return "other packages";
  return "the server's own code";
}

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  profile.samples.forEach((id, index) => selfByNode.set(id, (selfByNode.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const byPart = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let busy = 0;
  for (const [id, micros] of selfByNode) {
    const frame = byId.get(id)!.callFrame;
    const part = partOf(frame);
    byPart.set(part, (byPart.get(part) ?? 0) + micros);
    total += micros;
    if (part !== "idle") {
      busy += micros;
      const name = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    }
  }
  const pct = (micros: number) => `${((micros / busy) * 100).toFixed(1)} %`;
  console.log(`\n${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((busy / total) * 100).toFixed(0)} %); shares of the busy time:`);
  for (const [part, micros] of [...byPart].filter(([part]) => part !== "idle").sort((a, b) => b[1] - a[1])) console.log(`  ${pct(micros).padStart(7)}  ${part}`);
  console.log("  top functions by self time:");
  for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${pct(micros).padStart(7)}  ${name}`);
}
