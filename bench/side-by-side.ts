// Two builds of the server measured side by side: both run at once, each on
// its own fresh database, and their calls alternate (A B, B A, ...), so a
// machine whose speed drifts during the run slows both alike. For comparing a
// change with the code before it, where two whole `npm run bench` runs made at
// different times would mostly measure the machine.
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   (cd /tmp/before && npm run db:generate && node scripts/build-server.mjs) && node scripts/build-server.mjs
//   npx tsx bench/side-by-side.ts /tmp/before .                 # the embedded database
//   SIDE_BY_SIDE_DATABASES=postgres://.../a,postgres://.../b npx tsx bench/side-by-side.ts /tmp/before .
//
// Prints, for each build, the p50 of: the approval round trip and its halves
// (the ask until the operator's socket hears it; the decision), a call a rule
// approves, a request begun and completed, and a request's first ask.
// SIDE_BY_SIDE_SUSTAINED=1 instead runs the sustained load (100 agents, 8 s)
// on each in turn, three rounds; SIDE_BY_SIDE_ONLY=begin-and-complete only
// begins and completes requests, and SIDE_BY_SIDE_ONLY=depth-3 only makes
// round trips from the leaf of a three-deep call chain, in three windows of
// the count each, and SIDE_BY_SIDE_ONLY=state-save saves new versions of a
// small thread state, likewise; SIDE_BY_SIDE_ONLY=console-reads makes the console's reads,
// which go through Prisma's client. The PostgreSQL databases are emptied first. BENCH_SERVER_NODE_ARGS
// passes Node options to both servers, as in npm run bench (a CPU profile of
// each, say): they start as its servers do (bench/server.ts).
import { createTollgate } from "../sdk/src/index.ts";
import { connectOperator } from "./approver.ts";
import { startBenchServer } from "./server.ts";
import { askSteadily } from "./steady-load.ts";
import { percentile } from "./stats.ts";

const COUNT = Number(process.env.SIDE_BY_SIDE_COUNT ?? 400);
const WARM_UP = 30;
/** The sustained load's warm-up, as in npm run bench. */
const WARM_UP_SECONDS = Number(process.env.BENCH_SUSTAINED_WARM_UP_SECONDS ?? 2);
const now = () => performance.now();

/** A build's server (its dist/server.mjs), logged in as the operator, with an agent's session and request. */
async function startBuild(dir: string, databaseUrl: string) {
  const server = await startBenchServer(databaseUrl || undefined, { build: dir });
  const { url, agentKey } = server;
  const { client: operator, socket } = await connectOperator(server);
  await operator.policy.create.mutate({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
  const sdk = createTollgate({ url, apiKey: agentKey });
  const { sessionId } = await sdk.openSession({ title: "side by side" });
  const asking = await sdk.begin({ sessionId, agent: "asker" });
  const looking = await sdk.begin({ sessionId, agent: "looker" });
  // The leaf of a call chain three requests deep, as in npm run bench's depth-3 round trip.
  let deepest = await sdk.begin({ sessionId, agent: "deep-1" });
  for (let level = 2; level <= 3; level++) deepest = await sdk.begin({ sessionId, agent: `deep-${level}`, parentRequestId: deepest.requestId });
  const saving = await sdk.begin({ sessionId, agent: "saver" });
  await sdk.call("thread.configure", { taskId: saving.taskId, config: {} });
  const samples = { stateSave: [] as number[], roundTrip: [] as number[], askUntilHeard: [] as number[], decide: [] as number[], ruleDecides: [] as number[], beginAndComplete: [] as number[], firstAsk: [] as number[], depthThree: [] as number[], consoleReads: {} as Record<string, number[]> };

  /** The agent asks, the operator's socket hears it, the operator decides, the agent's held connection receives it. */
  async function askAndDecide(requestId: string, i: number) {
    const started = now();
    const heard = new Promise<{ approvalId: string }>((resolve) => socket.once("approval:requested", resolve));
    const answered = sdk.ask({ requestId, tool: "send_email", args: { i } });
    const { approvalId } = await heard;
    const askedAt = now();
    await operator.approval.decide.mutate({ approvalId, action: "approve" });
    const decidedAt = now();
    if ((await answered).status !== "APPROVED") throw new Error(`round trip ${i} was not approved`);
    return { total: now() - started, askUntilHeard: askedAt - started, decide: decidedAt - askedAt };
  }

  let consoleTree: { requestId: string } | undefined;

  return {
    dir,
    samples,
    async roundTrip(i: number, record: boolean) {
      const { total, askUntilHeard, decide } = await askAndDecide(asking.requestId, i);
      if (!record) return;
      samples.roundTrip.push(total);
      samples.askUntilHeard.push(askUntilHeard);
      samples.decide.push(decide);
    },
    /** The same round trip from the leaf of a three-deep chain: every request above it pauses and resumes too. */
    async depthThreeRoundTrip(i: number, record: boolean) {
      const { total } = await askAndDecide(deepest.requestId, i);
      if (record) samples.depthThree.push(total);
    },
    async ruleDecides(i: number, record: boolean) {
      const started = now();
      const result = await sdk.call("approval.request", { requestId: looking.requestId, tool: "lookup_customer", args: { i } });
      if (result.status !== "APPROVED") throw new Error(`lookup ${i} was not approved`);
      if (record) samples.ruleDecides.push(now() - started);
    },
    /** A request's first ask, a rule deciding it, right after the request began. */
    async firstAsk(i: number, record: boolean) {
      const { requestId } = await sdk.call("request.begin", { sessionId, agent: "first-asker" });
      const started = now();
      const result = await sdk.call("approval.request", { requestId, tool: "lookup_customer", args: { i } });
      if (result.status !== "APPROVED") throw new Error(`first ask ${i} was not approved`);
      if (record) samples.firstAsk.push(now() - started);
    },
    /** A request begun and completed (two calls). */
    async beginAndComplete(_i: number, record: boolean) {
      const started = now();
      const { requestId } = await sdk.call("request.begin", { sessionId, agent: "worker" });
      await sdk.call("request.complete", { requestId, output: { ok: true } });
      if (record) samples.beginAndComplete.push(now() - started);
    },
    /** A new version of a small thread state (about 1 KB), saved by the request that runs the task. */
    async stateSave(i: number, record: boolean) {
      const state = { step: i, notes: Array.from({ length: 20 }, (_, note) => `note ${note} of step ${i}`) };
      const started = now();
      await sdk.call("state.save", { taskId: saving.taskId, requestId: saving.requestId, state });
      if (record) samples.stateSave.push(now() - started);
    },
    /** 100 agents ask and wait for `seconds`, the operator approving each as its socket hears it: round trips a second. */
    async sustained(agents: number, seconds: number) {
      const { sessionId: loadSession } = await sdk.openSession({ title: "side by side: sustained" });
      const approve = (event: { approvalId: string; sessionId: string }) => {
        if (event.sessionId === loadSession) void operator.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
      };
      socket.on("approval:requested", approve);
      const requests = await Promise.all(Array.from({ length: agents }, (_, index) => sdk.begin({ sessionId: loadSession, agent: `agent-${index}` })));
      const { measured, elapsedSeconds } = await askSteadily(
        requests.map((request, index) => () => sdk.ask({ requestId: request.requestId, tool: "send_email", args: { index } })),
        WARM_UP_SECONDS,
        seconds,
        (answer) => answer.status === "APPROVED",
      );
      socket.off("approval:requested", approve);
      return measured / elapsedSeconds;
    },
    /** The console's reads, which go through Prisma's client (and its query compiler), on a session with a tree of 22 requests. */
    async consoleReads(_i: number, record: boolean) {
      if (!consoleTree) {
        const root = await sdk.begin({ sessionId, agent: "console-root" });
        const child = await sdk.begin({ sessionId, agent: "console-child", parentRequestId: root.requestId });
        for (let leaf = 0; leaf < 20; leaf++) await (await sdk.begin({ sessionId, agent: "console-leaf", parentRequestId: child.requestId })).complete({ leaf });
        consoleTree = { requestId: child.requestId };
      }
      const { requestId } = consoleTree;
      const reads: Record<string, () => Promise<unknown>> = {
        "session.list": () => operator.session.list.query({}),
        "task.tree": () => operator.task.tree.query({ sessionId }),
        "request.get": () => operator.request.get.query({ requestId }),
        "approval.list": () => operator.approval.list.query({}),
      };
      for (const [name, read] of Object.entries(reads)) {
        const started = now();
        await read();
        if (record) (samples.consoleReads[name] ??= []).push(now() - started);
      }
    },
    async stop() {
      socket.close();
      sdk.close();
      await server.stop();
    },
  };
}

type Build = Awaited<ReturnType<typeof startBuild>>;

/** `count` calls on each build after the warm-up, alternating which goes first. */
async function alternate(builds: [Build, Build], call: (build: Build, i: number, record: boolean) => Promise<void>, count: number) {
  for (let i = 0; i < WARM_UP; i++) for (const build of builds) await call(build, i, false);
  for (let i = 0; i < count; i++) for (const build of i % 2 ? builds : [...builds].reverse()) await call(build, i, true);
}

/** `call` alternated in three windows of the count each; after each, every build's p50 of the samples `of` names, which it empties. */
async function inThreeWindows(label: string, call: (build: Build, i: number, record: boolean) => Promise<void>, of: (samples: Build["samples"]) => number[]) {
  for (let window = 1; window <= 3; window++) {
    await alternate(builds, call, COUNT);
    console.log(`window ${window}: ${label} p50 ${builds.map(({ dir, samples }) => `${dir} ${percentile(of(samples).splice(0), 50).toFixed(2)} ms`).join(", ")}`);
  }
}

const [dirA, dirB] = process.argv.slice(2);
if (!dirA || !dirB) throw new Error("usage: npx tsx bench/side-by-side.ts <build directory A> <build directory B>");
const [databaseA = "", databaseB = ""] = (process.env.SIDE_BY_SIDE_DATABASES ?? "").split(",");
const builds: [Build, Build] = [await startBuild(dirA, databaseA), await startBuild(dirB, databaseB)];
try {
  if (process.env.SIDE_BY_SIDE_SUSTAINED) {
    for (let round = 1; round <= 3; round++) {
      // Which build goes first alternates too: the first run of a round found the machine a little colder.
      const rates: number[] = [];
      for (const index of round % 2 ? [0, 1] : [1, 0]) rates[index] = await builds[index]!.sustained(100, 8);
      console.log(`sustained round ${round}: ${builds.map((build, index) => `${build.dir} ${rates[index]!.toFixed(0)}/s`).join(", ")}`);
    }
  } else if (process.env.SIDE_BY_SIDE_ONLY === "begin-and-complete") {
    await inThreeWindows("begin + complete", (build, i, record) => build.beginAndComplete(i, record), (samples) => samples.beginAndComplete);
  } else if (process.env.SIDE_BY_SIDE_ONLY === "state-save") {
    await inThreeWindows("state.save", (build, i, record) => build.stateSave(i, record), (samples) => samples.stateSave);
  } else if (process.env.SIDE_BY_SIDE_ONLY === "console-reads") {
    await alternate(builds, (build, i, record) => build.consoleReads(i, record), COUNT);
    for (const { dir, samples } of builds) {
      console.log(`${dir}: ${Object.entries(samples.consoleReads).map(([name, values]) => `${name} p50 ${percentile(values, 50).toFixed(2)} ms`).join(", ")}`);
    }
  } else if (process.env.SIDE_BY_SIDE_ONLY === "depth-3") {
    await inThreeWindows("depth-3 round trip", (build, i, record) => build.depthThreeRoundTrip(i, record), (samples) => samples.depthThree);
  } else {
    await alternate(builds, (build, i, record) => build.roundTrip(i, record), COUNT);
    await alternate(builds, (build, i, record) => build.ruleDecides(i, record), COUNT);
    await alternate(builds, (build, i, record) => build.beginAndComplete(i, record), COUNT);
    await alternate(builds, (build, i, record) => build.firstAsk(i, record), COUNT);
    for (const { dir, samples } of builds) {
      const p50 = (values: number[]) => percentile(values, 50).toFixed(2);
      console.log(
        `${dir}: round trip p50 ${p50(samples.roundTrip)} ms (p99 ${percentile(samples.roundTrip, 99).toFixed(2)}), ask until heard ${p50(samples.askUntilHeard)}, decide ${p50(samples.decide)}, a rule decides ${p50(samples.ruleDecides)}, begin + complete ${p50(samples.beginAndComplete)}, a request's first ask ${p50(samples.firstAsk)}`,
      );
    }
  }
} finally {
  for (const build of builds) await build.stop();
}
process.exit(0);
