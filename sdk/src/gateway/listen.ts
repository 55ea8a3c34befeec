// --listen: the gateway served to MCP clients over Streamable HTTP at /mcp.
// Each client session gets its own connection to the upstream. A request is
// refused before it reaches MCP unless it carries the client token, names
// this gateway in Host, and comes from no browser page of another origin (a
// web page the user visits could otherwise reach a port on 127.0.0.1, or a
// name it rebinds there, and call tools). A client whose connection drops
// while it waits gets its calls canceled, as over stdio.
import { randomUUID, timingSafeEqual, createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, isJSONRPCRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { serveClient, type GatewayConnection } from "./gateway.ts";

export interface ListenOptions {
  port: number;
  host: string;
  /** What clients send as `Authorization: Bearer <token>`. */
  token: string;
  connection: GatewayConnection;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

function refuse(response: ServerResponse, status: number, message: string) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
}

/** The ids of the requests in a POST's body (one message or a batch). */
function requestIds(body: unknown): RequestId[] {
  return (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest).map((message) => message.id);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export async function listen(options: ListenOptions) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const expected = digest(`Bearer ${options.token}`);
  let hosts: Set<string> = new Set();
  let origins: Set<string> = new Set();

  /** Why this request may not pass, or null. */
  function refusal(request: IncomingMessage): [number, string] | null {
    if (!hosts.has((request.headers.host ?? "").toLowerCase())) return [403, "the Host header does not name this gateway"];
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) return [403, `requests from the origin ${origin} are not allowed`];
    // Compared as digests: equal lengths, in constant time.
    if (!timingSafeEqual(digest(request.headers.authorization ?? ""), expected)) return [401, "missing or wrong bearer token (TOLLGATE_MCP_LISTEN_TOKEN)"];
    return null;
  }

  const http = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? "/", "http://gateway");
      if (url.pathname !== "/mcp") return refuse(response, 404, "the MCP endpoint is /mcp");
      const refused = refusal(request);
      if (refused) return refuse(response, ...refused);
      const sessionId = request.headers["mcp-session-id"];
      const body = request.method === "POST" ? await readJson(request).catch(() => null) : undefined;
      if (body === null) return refuse(response, 400, "the body is not JSON");
      let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId !== undefined || !isInitializeRequest(body)) return refuse(response, 404, "no such session: initialize first");
        const opened = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, opened),
        });
        opened.onclose = () => {
          if (opened.sessionId) sessions.delete(opened.sessionId);
        };
        void serveClient(opened, options.connection).catch((error) => options.connection.log(`tollgate-mcp: a client session failed: ${(error as Error).message}`));
        transport = opened;
      }
      // The spec lets a client resume a dropped stream, but the gateway keeps no
      // event store to resume it from: the answers of the requests on it would
      // reach nobody, and an approval decided later would run a tool for nobody.
      // So they are canceled, as the client would cancel them (approvals too).
      const asked = requestIds(body);
      const session = transport;
      if (asked.length > 0) {
        response.once("close", () => {
          if (response.writableFinished) return;
          for (const requestId of asked) {
            session.onmessage?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "the client's connection closed" } });
          }
        });
      }
      await transport.handleRequest(request, response, body);
    })().catch((error) => {
      options.connection.log(`tollgate-mcp: ${(error as Error).message}`);
      if (!response.headersSent) refuse(response, 500, "the gateway failed to handle the request");
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, resolve);
  });
  const port = (http.address() as AddressInfo).port;
  const names = new Set([options.host, "127.0.0.1", "localhost", "[::1]"]);
  hosts = new Set([...names].map((name) => `${name}:${port}`.toLowerCase()));
  origins = new Set([...names].map((name) => `http://${name}:${port}`.toLowerCase()));
  return {
    url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/mcp`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
