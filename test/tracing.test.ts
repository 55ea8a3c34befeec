// OpenTelemetry from a platform engineer's side: a Tollgate process told where
// an OTLP collector is (the standard variables) sends a span per API call,
// continuing the agent's trace from its `traceparent`, with its database
// statements as child spans. The collector is a local HTTP server that reads
// the OTLP/HTTP JSON the exporter sends.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_KEY } from "./harness.ts";
import { serverProcess, type ServerProcess } from "./process.ts";

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes: { key: string; value: { stringValue?: string; boolValue?: boolean } }[];
}

const spans: ExportedSpan[] = [];
let collector: Server;
let node: ServerProcess;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.headers["content-type"]?.startsWith("application/json")) {
        const exported = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[] };
        for (const resource of exported.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  node = await serverProcess({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SERVICE_NAME: "tollgate-under-test" } });
  await node.start();
}, 120_000);

afterAll(async () => {
  await node?.cleanup();
  await new Promise<void>((resolve) => collector.close(() => resolve()));
});

const attribute = (span: ExportedSpan, key: string) => {
  const found = span.attributes.find((candidate) => candidate.key === key)?.value;
  return found?.stringValue ?? found?.boolValue;
};

async function callAsAgent(path: string, input: unknown, traceparent: string) {
  const response = await fetch(`${node.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT_KEY}`, "content-type": "application/json", traceparent },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as { result?: { data: Record<string, string> } } };
}

describe("tracing", () => {
  it("each API call is a server span under the agent's span, with its statements as children; refusals are marked as errors", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const agentSpanId = "00f067aa0ba902b7";
    const traceparent = `00-${traceId}-${agentSpanId}-01`;

    const opened = await callAsAgent("session.open", { title: "traced" }, traceparent);
    expect(opened.status).toBe(200);
    const begun = await callAsAgent("request.begin", { sessionId: opened.body.result!.data.sessionId, agent: "traced-agent" }, traceparent);
    expect(begun.status).toBe(200);
    const refused = await callAsAgent("request.complete", { requestId: "req_0000000000000000000000" }, traceparent);
    expect(refused.status).toBe(404);

    await expect.poll(() => spans.filter((span) => span.traceId === traceId && span.name === "request.complete").length, { timeout: 10_000 }).toBe(1);
    const calls = spans.filter((span) => span.traceId === traceId && span.parentSpanId === agentSpanId);
    expect(calls.map((span) => span.name).sort()).toEqual(["request.begin", "request.complete", "session.open"]);

    const beginSpan = calls.find((span) => span.name === "request.begin")!;
    expect(beginSpan.kind).toBe(2); // SERVER
    expect(attribute(beginSpan, "rpc.method")).toBe("request.begin");
    expect(attribute(beginSpan, "tollgate.caller")).toBe("agent");
    expect(attribute(beginSpan, "tollgate.workspace_id")).toMatch(/^ws_/);
    const statements = spans.filter((span) => span.parentSpanId === beginSpan.spanId);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.every((span) => span.name.startsWith("db.") && span.traceId === traceId)).toBe(true);

    const refusedSpan = calls.find((span) => span.name === "request.complete")!;
    expect(refusedSpan.status?.code).toBe(2); // ERROR
    expect(attribute(refusedSpan, "tollgate.error_code")).toBe("NOT_FOUND");
  });

  it("a call without a traceparent starts a trace of its own", async () => {
    const response = await fetch(`${node.url}/api/trpc/session.open`, {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "untraced" }),
    });
    expect(response.status).toBe(200);
    await expect.poll(() => spans.filter((span) => span.name === "session.open" && !span.parentSpanId).length, { timeout: 10_000 }).toBeGreaterThan(0);
  });
});
