// The MCP gateway between one client and its upstream server: an MCP server
// to the client and an MCP client to the upstream. It initializes with each
// side on its own (the upstream learns the client's capabilities, the client
// the upstream's, nothing more), forwards every request and notification both
// ways as it is, and stops only `tools/call`, which goes through Tollgate.
// A task-augmented `tools/call` (MCP tasks) is a task of the gateway's own:
// the client has it at once, while the approval waits and the call runs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsResultSchema,
  McpError,
  ResultSchema,
  type CallToolRequest,
  type ClientCapabilities,
  type Implementation,
  type InitializeRequest,
  type InitializeResult,
  type JSONRPCRequest,
  type Notification,
  type CallToolResult,
  type CreateTaskResult,
  type ServerCapabilities,
  type Task,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { toolCallGate } from "./gate-tool-call.ts";
import type { JournaledTask, TaskJournal } from "./task-journal.ts";

export const GATEWAY_INFO: Implementation = { name: "tollgate-mcp", version: "0.1.0" };

/** The client decides how long it waits; the gateway never gives up on a request first (at most 24 days, the longest timer). */
const FORWARD_TIMEOUT_MS = 24 * 24 * 3600_000;
/** How often a client is told to look at a task that waits (a person's decision takes seconds at least). */
const TASK_POLL_MS = 1_000;
/** What a task says while its approval waits. */
export const TASK_WAITING = "waiting for a decision in Tollgate";

export interface GatewayConnection {
  /** Opens the upstream connection (a child over stdio, or Streamable HTTP). */
  upstream: () => Transport;
  /** The gate for this connection's tool calls, once the upstream has said who it is. */
  gateFor: (upstreamInfo: Implementation) => Promise<ReturnType<typeof toolCallGate>>;
  log: (line: string) => void;
  /** Where a gateway with a run id notes the tasks it is deciding (absent: tasks live in memory only). */
  taskJournal?: TaskJournal;
}

type Params = Record<string, unknown> & { _meta?: Record<string, unknown> & { progressToken?: string | number } };

/** The request's parameters without the sender's progress token: the next hop gets its own. */
function withoutProgressToken(params: unknown): { params: Params | undefined; token: string | number | undefined } {
  if (!params || typeof params !== "object") return { params: undefined, token: undefined };
  const { _meta, ...rest } = params as Params;
  if (!_meta || _meta.progressToken === undefined) return { params: params as Params, token: undefined };
  const { progressToken, ...meta } = _meta;
  return { params: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest, token: progressToken };
}

/**
 * The tasks of one client connection, as the MCP SDK's Protocol serves
 * tasks/get, tasks/result, tasks/list and tasks/cancel from them. A task the
 * client cancels stops its call: the approval it waits on is canceled.
 */
class GatewayTaskStore extends InMemoryTaskStore {
  readonly running = new Map<string, AbortController>();

  /** A task a stopped gateway of the run noted, under its own id, working again (InMemoryTaskStore's entry, whole). */
  restore(noted: JournaledTask, statusMessage: string, pollInterval: number): void {
    const entries = (this as unknown as { tasks: Map<string, { task: Task; request: unknown; requestId: number }> }).tasks;
    const task: Task = { taskId: noted.taskId, status: "working", statusMessage, ttl: noted.ttl, createdAt: noted.createdAt, lastUpdatedAt: new Date().toISOString(), pollInterval };
    entries.set(noted.taskId, { task, request: { method: "tools/call", params: { name: noted.name, arguments: noted.arguments } }, requestId: 0 });
  }

  override async updateTaskStatus(taskId: string, status: Task["status"], statusMessage?: string, sessionId?: string): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === "cancelled") this.running.get(taskId)?.abort();
  }
}

/**
 * Runs an approved call on the upstream. A tool the server runs only as a
 * task (`execution.taskSupport: "required"`) is asked for as one and waited
 * on; any other is a plain request.
 */
async function callUpstreamTool(client: Client, params: CallToolRequest["params"], tool: Tool | undefined, signal: AbortSignal): Promise<CallToolResult> {
  const options: RequestOptions = { signal, timeout: FORWARD_TIMEOUT_MS };
  if (tool?.execution?.taskSupport !== "required") return client.request({ method: "tools/call", params }, CallToolResultSchema, options) as Promise<CallToolResult>;
  for await (const message of client.experimental.tasks.callToolStream(params, CallToolResultSchema, { ...options, task: {} })) {
    if (message.type === "result") return message.result as CallToolResult;
    if (message.type === "error") throw message.error;
  }
  throw new Error("the MCP server's task ended without a result");
}

/**
 * The server's capabilities, name and instructions are the upstream's, known
 * only after the client's initialize has reached the gateway; the MCP SDK's
 * Server takes them at construction. Set on its fields (SDK 1.x), then its own
 * initialize answers with them and checks notifications against them.
 */
function adoptUpstream(server: Server, upstream: Client): void {
  const fields = server as unknown as { _capabilities: ServerCapabilities; _serverInfo: Implementation; _instructions?: string };
  fields._capabilities = upstream.getServerCapabilities() ?? {};
  fields._serverInfo = upstream.getServerVersion() ?? GATEWAY_INFO;
  fields._instructions = upstream.getInstructions();
}

/** Serves one client on `clientSide`; resolves when the client has gone and what it waited on is canceled. */
export async function serveClient(clientSide: Transport, connection: GatewayConnection): Promise<void> {
  const tasks = new GatewayTaskStore();
  const server = new Server(GATEWAY_INFO, { capabilities: {}, taskStore: tasks });
  let upstream: Client | null = null;
  let gate: ReturnType<typeof toolCallGate> | null = null;
  const handling = new Set<Promise<unknown>>();
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));

  const forward = (to: Client | Server, request: { method: string; params?: unknown }, extra: { signal: AbortSignal; sendNotification: (n: never) => Promise<void> }) => {
    const { params, token } = withoutProgressToken(request.params);
    const options: RequestOptions = { signal: extra.signal, timeout: FORWARD_TIMEOUT_MS };
    if (token !== undefined) {
      // The next hop's progress, told to the sender under the sender's own token.
      options.onprogress = (progress) => void extra.sendNotification({ method: "notifications/progress", params: { ...progress, progressToken: token } } as never).catch(() => undefined);
      options.resetTimeoutOnProgress = true;
    }
    return to.request({ method: request.method, params } as never, ResultSchema.passthrough(), options);
  };

  /**
   * The tools as the upstream lists them now, by name: what the operator is
   * told of a call (and what a pin is checked against) is what the server
   * says at the moment of the call, not what it said earlier.
   */
  async function listedTools(client: Client): Promise<Map<string, Tool>> {
    const listed = new Map<string, Tool>();
    let cursor: string | undefined;
    do {
      const page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, ListToolsResultSchema, { timeout: FORWARD_TIMEOUT_MS });
      for (const tool of page.tools) listed.set(tool.name, tool);
      cursor = page.nextCursor;
    } while (cursor);
    return listed;
  }

  async function connectUpstream(request: InitializeRequest): Promise<Client> {
    const client = new Client(request.params.clientInfo, { capabilities: request.params.capabilities as ClientCapabilities });
    // The upstream's own requests (elicitation, sampling, roots) and notifications go to the client as they are.
    client.fallbackRequestHandler = (upstreamRequest: JSONRPCRequest, extra) => forward(server, upstreamRequest, extra as never) as never;
    client.fallbackNotificationHandler = async (notification: Notification) => {
      await server.notification(notification as never);
    };
    client.onclose = () => {
      connection.log("tollgate-mcp: the upstream MCP server closed the connection");
      void server.close();
    };
    await client.connect(connection.upstream());
    return client;
  }

  server.setRequestHandler(InitializeRequestSchema, async (request): Promise<InitializeResult> => {
    if (upstream) throw new McpError(ErrorCode.InvalidRequest, "this connection is already initialized");
    upstream = await connectUpstream(request);
    adoptUpstream(server, upstream);
    gate = await connection.gateFor(upstream.getServerVersion() ?? GATEWAY_INFO);
    server.oninitialized = await takeUpJournaledTasks(upstream);
    return (server as unknown as { _oninitialize(request: InitializeRequest): Promise<InitializeResult> })._oninitialize(request);
  });

  server.fallbackRequestHandler = (request: JSONRPCRequest, extra) => {
    if (!upstream || !gate) throw new McpError(ErrorCode.InvalidRequest, "initialize first");
    const client = upstream;
    const handled = (async () => {
      if (request.method !== "tools/call") return forward(client, request, extra as never);
      const { params, token } = withoutProgressToken(request.params);
      // The client's task parameters are the gateway's to honour: the upstream is asked plainly (or for a task of its own).
      const { task: asTask, ...call } = params as CallToolRequest["params"];
      const known = await listedTools(client).catch(() => new Map<string, Tool>());
      const tool = known.get(call.name);
      const runUpstream = (signal: AbortSignal) => (args: Record<string, unknown>) => callUpstreamTool(client, { ...call, arguments: args }, tool, signal);
      if (asTask) return startTask(call, tool, token, extra as never, runUpstream);
      return gate!(
        call.name,
        call.arguments ?? {},
        tool,
        {
          signal: extra.signal,
          progressToken: token,
          sendProgress: (progress, message) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token!, progress, message } }),
        },
        runUpstream(extra.signal),
      );
    })();
    handling.add(handled);
    void handled.catch(() => undefined).finally(() => handling.delete(handled));
    return handled as never;
  };
  type TaskStoreOfRequest = {
    createTask: (params: { ttl?: number | null; pollInterval?: number }) => Promise<Task>;
    updateTaskStatus: (id: string, status: Task["status"], message?: string) => Promise<void>;
    storeTaskResult: (id: string, status: "completed" | "failed", result: CallToolResult) => Promise<void>;
  };

  /**
   * A task-augmented call: the client gets its task at once, "working" while
   * the approval waits and the call runs; the task ends with the tool's
   * result, "failed" when that is an error (a rejection, an expiry, a call
   * that failed), as MCP's tasks say of a tool's isError.
   */
  async function startTask(
    call: CallToolRequest["params"],
    tool: Tool | undefined,
    progressToken: string | number | undefined,
    extra: { taskStore?: TaskStoreOfRequest; taskRequestedTtl?: number },
    runUpstream: (signal: AbortSignal) => (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CreateTaskResult> {
    const store = extra.taskStore!;
    const task = await store.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: TASK_POLL_MS });
    await connection.taskJournal?.add({ taskId: task.taskId, name: call.name, arguments: call.arguments ?? {}, ttl: task.ttl ?? null, createdAt: task.createdAt });
    followTask(task.taskId, store, call, tool, progressToken, runUpstream);
    return { task };
  }

  /** Gates the task's call and ends the task with what it answered (or leaves it canceled). */
  function followTask(
    taskId: string,
    store: TaskStoreOfRequest,
    call: CallToolRequest["params"],
    tool: Tool | undefined,
    progressToken: string | number | undefined,
    runUpstream: (signal: AbortSignal) => (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): void {
    const stop = new AbortController();
    tasks.running.set(taskId, stop);
    const say = (message: string) => store.updateTaskStatus(taskId, "working", message).catch(() => undefined);
    const settled = (async () => {
      await say(TASK_WAITING);
      // The task was answered at once, so its progress goes out unrelated to that request (over Streamable HTTP, on the client's own stream);
      // the MCP SDK's client keeps a task's progress token alive until the task ends.
      const sendProgress = (progress: number, message: string) =>
        server.notification({ method: "notifications/progress", params: { progressToken: progressToken!, progress, message } });
      const result = await gate!(call.name, call.arguments ?? {}, tool, { signal: stop.signal, progressToken, sendProgress }, async (args) => {
        await say("approved in Tollgate; the MCP server runs the tool");
        return runUpstream(stop.signal)(args);
      });
      // A task the client canceled is over already; what the gate answered is for nobody.
      if (!stop.signal.aborted) await store.storeTaskResult(taskId, result.isError ? "failed" : "completed", result);
    })()
      .catch((error: Error) => connection.log(`tollgate-mcp: task ${taskId} (${call.name}) could not be finished: ${error.message}`))
      .finally(async () => {
        tasks.running.delete(taskId);
        await connection.taskJournal?.remove(taskId).catch((error: Error) => connection.log(`tollgate-mcp: could not note that task ${taskId} ended: ${error.message}`));
      });
    handling.add(settled);
    void settled.finally(() => handling.delete(settled));
  }

  /**
   * The tasks a gateway of this run left unfinished when it stopped: known
   * again under their ids, "working", before the client's initialize is
   * answered (so its first tasks/get finds them); their calls are gated again
   * once it is (which, in a continued run, finds the approval still waiting
   * instead of asking twice).
   */
  async function takeUpJournaledTasks(client: Client): Promise<() => void> {
    const noted = (await connection.taskJournal?.read()) ?? [];
    if (noted.length === 0) return () => undefined;
    const known = await listedTools(client).catch(() => new Map<string, Tool>());
    for (const record of noted) tasks.restore(record, TASK_WAITING, TASK_POLL_MS);
    return () => {
      const store = (server as unknown as { requestTaskStore(request: undefined, sessionId: undefined): TaskStoreOfRequest }).requestTaskStore(undefined, undefined);
      for (const record of noted) {
        const call = { name: record.name, arguments: record.arguments };
        const tool = known.get(record.name);
        followTask(record.taskId, store, call, tool, undefined, (signal) => (args) => callUpstreamTool(client, { ...call, arguments: args }, tool, signal));
        connection.log(`tollgate-mcp: took up task ${record.taskId} (${record.name}) of the run`);
      }
    };
  }

  server.fallbackNotificationHandler = async (notification: Notification) => {
    await upstream?.notification(notification as never);
  };

  server.onclose = () => {
    // Aborted by the SDK on close (and the tasks here): each waiting call cancels its approval; then the upstream goes.
    for (const stop of tasks.running.values()) stop.abort();
    void Promise.allSettled([...handling]).then(async () => {
      await upstream?.close().catch(() => undefined);
      tasks.cleanup();
      closed();
    });
  };
  await server.connect(clientSide);
  return done;
}
