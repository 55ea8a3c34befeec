// The MCP gateway between one client and its upstream server: an MCP server
// to the client and an MCP client to the upstream. It initializes with each
// side on its own (the upstream learns the client's capabilities, the client
// the upstream's, nothing more), forwards every request and notification both
// ways as it is, and stops only `tools/call`, which goes through Tollgate.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
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
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { toolCallGate } from "./gate-tool-call.ts";

export const GATEWAY_INFO: Implementation = { name: "tollgate-mcp", version: "0.1.0" };

/** The client decides how long it waits; the gateway never gives up on a request first (at most 24 days, the longest timer). */
const FORWARD_TIMEOUT_MS = 24 * 24 * 3600_000;

export interface GatewayConnection {
  /** Opens the upstream connection (a child over stdio, or Streamable HTTP). */
  upstream: () => Transport;
  /** The gate for this connection's tool calls, once the upstream has said who it is. */
  gateFor: (upstreamInfo: Implementation) => Promise<ReturnType<typeof toolCallGate>>;
  log: (line: string) => void;
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
  const server = new Server(GATEWAY_INFO, { capabilities: {} });
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
    return (server as unknown as { _oninitialize(request: InitializeRequest): Promise<InitializeResult> })._oninitialize(request);
  });

  server.fallbackRequestHandler = (request: JSONRPCRequest, extra) => {
    if (!upstream || !gate) throw new McpError(ErrorCode.InvalidRequest, "initialize first");
    const client = upstream;
    const handled = (async () => {
      if (request.method !== "tools/call") return forward(client, request, extra as never);
      const { params, token } = withoutProgressToken(request.params);
      const call = params as CallToolRequest["params"];
      const known = await listedTools(client).catch(() => new Map<string, Tool>());
      return gate!(
        call.name,
        call.arguments ?? {},
        known.get(call.name),
        {
          signal: extra.signal,
          progressToken: token,
          sendProgress: (progress, message) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token!, progress, message } }),
        },
        (args) => client.request({ method: "tools/call", params: { ...call, arguments: args } }, CallToolResultSchema, { signal: extra.signal, timeout: FORWARD_TIMEOUT_MS }) as never,
      );
    })();
    handling.add(handled);
    void handled.catch(() => undefined).finally(() => handling.delete(handled));
    return handled as never;
  };
  server.fallbackNotificationHandler = async (notification: Notification) => {
    await upstream?.notification(notification as never);
  };

  server.onclose = () => {
    // Aborted by the SDK on close: each waiting call cancels its approval; then the upstream goes.
    void Promise.allSettled([...handling]).then(async () => {
      await upstream?.close().catch(() => undefined);
      closed();
    });
  };
  await server.connect(clientSide);
  return done;
}
