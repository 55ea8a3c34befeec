// The same pause and resume done in process by LangGraph.js, for comparison:
// a node calls interrupt(), the graph stops with its checkpoint saved, and
// invoking it again with Command({resume}) continues the node. No LLM and no
// network. The checkpointer is LangGraph's SQLite one on a file, as
// `SqliteSaver.fromConnString` sets it up (write-ahead log, synchronous=NORMAL:
// a checkpoint survives the process dying, not the machine, as on PGlite, which
// runs with fsync off; PostgreSQL syncs every commit); its MemorySaver, which
// keeps nothing, is measured too.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { percentile } from "./stats.ts";
import { warmUpInProcess } from "./warm-up.ts";

export type Checkpointer = "sqlite" | "memory";

const State = Annotation.Root({ answer: Annotation<string>() });

/** A graph whose one node pauses for a person; with depth > 1 it is nested in depth - 1 subgraphs. */
/** What the benchmark needs of a compiled graph, whatever its node names. */
interface PausingGraph {
  invoke(input: { answer: string } | Command, config: { configurable: { thread_id: string } }): Promise<{ answer: string; __interrupt__?: unknown }>;
}

/** Wraps a compiled graph as the one node of a parent graph (a subgraph). */
const nested = (inner: unknown) => new StateGraph(State).addNode("call", inner as never).addEdge(START, "call").addEdge("call", END);

function pausingGraph(depth: number, checkpointer: BaseCheckpointSaver): PausingGraph {
  const ask = new StateGraph(State)
    .addNode("ask", () => ({ answer: interrupt({ tool: "send_email", args: { to: "a@example.com" } }) as string }))
    .addEdge(START, "ask")
    .addEdge("ask", END);
  if (depth === 1) return ask.compile({ checkpointer }) as unknown as PausingGraph;
  // Subgraphs share the outermost graph's checkpointer, as LangGraph nests them.
  let inner: unknown = ask.compile();
  for (let level = 2; level < depth; level++) inner = nested(inner).compile();
  return nested(inner).compile({ checkpointer }) as unknown as PausingGraph;
}

/** Milliseconds for each pause and resume at this depth (1: one graph; 3: a cascade through two subgraphs). */
export async function langGraphRoundTrips(depth: number, count: number, kind: Checkpointer = "sqlite"): Promise<number[]> {
  const langGraph = await langGraphSampler(depth, kind);
  try {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) samples.push(await langGraph.sample());
    return samples;
  } finally {
    await langGraph.close();
  }
}

/** A graph at this depth on a new checkpointer, warmed up; each sample is one pause and resume, in milliseconds. */
export async function langGraphSampler(depth: number, kind: Checkpointer) {
  const folder = await mkdtemp(path.join(tmpdir(), "tollgate-bench-langgraph-"));
  const checkpointer = kind === "sqlite" ? SqliteSaver.fromConnString(path.join(folder, "checkpoints.sqlite")) : new MemorySaver();
  const graph = pausingGraph(depth, checkpointer);
  const once = async (thread: string) => {
    const config = { configurable: { thread_id: thread } };
    const paused = await graph.invoke({ answer: "" }, config);
    if (!("__interrupt__" in paused)) throw new Error("the graph did not pause");
    const resumed = await graph.invoke(new Command({ resume: "approved" }), config);
    if (resumed.answer !== "approved") throw new Error(`the graph resumed with ${JSON.stringify(resumed)}`);
  };
  const close = async () => {
    if (checkpointer instanceof SqliteSaver) checkpointer.db.close();
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await warmUpInProcess((i) => once(`warm-up-${depth}-${i}`));
  } catch (error) {
    await close();
    throw error;
  }
  let threads = 0;
  return {
    async sample(): Promise<number> {
      const started = performance.now();
      await once(`thread-${depth}-${threads++}`);
      return performance.now() - started;
    },
    close,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const kind of ["sqlite", "memory"] as const) {
    for (const depth of [1, 3]) {
      const samples = await langGraphRoundTrips(depth, 300, kind);
      console.log(`LangGraph, ${kind} checkpointer, depth ${depth}: p50 ${percentile(samples, 50).toFixed(2)} ms, p99 ${percentile(samples, 99).toFixed(2)} ms`);
    }
  }
}
