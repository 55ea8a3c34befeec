// The SDK's calls on the wire, against a local HTTP server that answers as
// the server would, or as a proxy in front of it might.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSender } from "./transport.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let apiUrl: string;
let seen: Seen[] = [];
let answer: (res: ServerResponse) => void;

const json = (status: number, body: unknown) => (res: ServerResponse) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      answer(res);
    });
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/trpc`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const rejection = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => expect.fail("the call was answered"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<never>;
};

describe("httpSender", () => {
  const send = () => httpSender(apiUrl, "tgk_key");

  it("sends a mutation as POST with its input as JSON and the key as a bearer token, and answers the result's data", async () => {
    seen = [];
    answer = json(200, { result: { data: { requestId: "req_1" } } });
    await expect(send()("request.begin", { sessionId: "ses_1", agent: "a" }, "mutation")).resolves.toEqual({ requestId: "req_1" });
    expect(seen).toEqual([
      expect.objectContaining({ method: "POST", url: "/api/trpc/request.begin", body: JSON.stringify({ sessionId: "ses_1", agent: "a" }) }),
    ]);
    expect(seen[0]!.headers).toMatchObject({ authorization: "Bearer tgk_key", "content-type": "application/json" });
  });

  it("sends a query as GET with its input URL-encoded", async () => {
    seen = [];
    answer = json(200, { result: { data: { status: "PENDING" } } });
    await send()("approval.await", { approvalId: "apr_1&x=y", timeoutMs: 0 }, "query");
    expect(seen[0]!.method).toBe("GET");
    expect(new URL(seen[0]!.url, "http://x").searchParams.get("input")).toBe(JSON.stringify({ approvalId: "apr_1&x=y", timeoutMs: 0 }));
  });

  it("keeps a path the server's URL has before /api/trpc (behind a proxy's prefix)", async () => {
    seen = [];
    answer = json(200, { result: { data: null } });
    await httpSender(apiUrl.replace("/api/trpc", "/tollgate/api/trpc"), "tgk_key")("request.complete", { requestId: "req_1" }, "mutation");
    expect(seen[0]!.url).toBe("/tollgate/api/trpc/request.complete");
  });

  it("rejects an error answer with tRPC's client error, the server's code and message kept", async () => {
    answer = json(404, { error: { code: -32004, message: "request req_9 not found", data: { code: "NOT_FOUND", httpStatus: 404 } } });
    const error = await rejection(send()("request.complete", { requestId: "req_9" }, "mutation"));
    expect(error.message).toBe("request req_9 not found");
    expect(error.data).toMatchObject({ code: "NOT_FOUND" });
  });

  it("rejects an answer that is not JSON (a proxy's error page) with no code, as a failure of the network", async () => {
    answer = (res) => res.writeHead(502, { "content-type": "text/html" }).end("<html>Bad Gateway</html>");
    const error = await rejection(send()("request.begin", { sessionId: "ses_1", agent: "a" }, "mutation"));
    expect(error.data).toBeUndefined();
  });

  it("rejects JSON that is neither a result nor an error, naming the call", async () => {
    answer = json(200, { hello: "world" });
    const error = await rejection(send()("request.begin", { sessionId: "ses_1", agent: "a" }, "mutation"));
    expect(error.message).toBe("the server's answer to request.begin (HTTP 200) is neither a result nor an error");
    expect(error.data).toBeUndefined();
  });

  it("rejects a call nobody answers with no code", async () => {
    const closed = createServer().listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await rejection(httpSender(`http://127.0.0.1:${port}/api/trpc`, "tgk_key")("request.begin", {}, "mutation"));
    expect(error.data).toBeUndefined();
  });
});
