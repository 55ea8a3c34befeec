// The integration passes' order: the files that take a minute or more start
// first. Vitest orders by the durations of the last run on this machine, and a
// fresh clone (CI) has none, so it ordered by file size: the crash, migration
// and durable-agent files started last, and each pass ended waiting on one of
// them (at 930 s, with its last file started at 849 s).
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Slowest first, from a whole run's JSON report (test-results/integration-*.json). */
const SLOW_FILES = [
  "durable-claude-agent",
  "durable-langgraph",
  "mcp-gateway",
  "one-round-trip",
  "crash",
  "sql-source",
  "sdk-package",
  "migrations",
  "durable-langchain",
  "fuzz",
  "embedded-database",
  "engine",
  "policies",
  "thread-state",
  "durable-openai-agents",
  "durable-ai-sdk",
].map((name) => `/test/${name}.test.ts`);

function rank(spec: TestSpecification): number {
  const index = SLOW_FILES.findIndex((file) => spec.moduleId.endsWith(file));
  return index < 0 ? SLOW_FILES.length : index;
}

export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Stable: the rest keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
