// The same pause and resume done in process by LangGraph.js, for comparison:
// a node calls interrupt(), the graph stops with its checkpoint saved, and
// invoking it again with Command({resume}) continues the node. No LLM and no
// network. The checkpointer is LangGraph's MemorySaver: its SQLite one needs a
// native module (better-sqlite3) that this benchmark does not build, and an
// in-memory checkpoint is cheaper than a durable one, so the comparison leans
// in LangGraph's favour.
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { percentile } from "./stats.ts";

const State = Annotation.Root({ answer: Annotation<string>() });

/** A graph whose one node pauses for a person; with depth > 1 it is nested in depth - 1 subgraphs. */
/** What the benchmark needs of a compiled graph, whatever its node names. */
interface PausingGraph {
  invoke(input: { answer: string } | Command, config: { configurable: { thread_id: string } }): Promise<{ answer: string; __interrupt__?: unknown }>;
}

/** Wraps a compiled graph as the one node of a parent graph (a subgraph). */
const nested = (inner: unknown) => new StateGraph(State).addNode("call", inner as never).addEdge(START, "call").addEdge("call", END);

function pausingGraph(depth: number): PausingGraph {
  const checkpointer = new MemorySaver();
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
export async function langGraphRoundTrips(depth: number, count: number): Promise<number[]> {
  const graph = pausingGraph(depth);
  const samples: number[] = [];
  for (let i = 0; i < count + 30; i++) {
    const config = { configurable: { thread_id: `thread-${depth}-${i}` } };
    const started = performance.now();
    const paused = await graph.invoke({ answer: "" }, config);
    if (!("__interrupt__" in paused)) throw new Error("the graph did not pause");
    const resumed = await graph.invoke(new Command({ resume: "approved" }), config);
    if (resumed.answer !== "approved") throw new Error(`the graph resumed with ${JSON.stringify(resumed)}`);
    if (i >= 30) samples.push(performance.now() - started);
  }
  return samples;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const depth of [1, 3]) {
    const samples = await langGraphRoundTrips(depth, 300);
    console.log(`LangGraph depth ${depth}: p50 ${percentile(samples, 50).toFixed(2)} ms, p99 ${percentile(samples, 99).toFixed(2)} ms`);
  }
}
