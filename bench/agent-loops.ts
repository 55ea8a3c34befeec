// An agent's full loop (begin, ask, wait for a person, complete) over plain
// HTTP or through the SDK, with an operator approving each ask the moment
// their console's socket hears it: shared by bench/clients.ts (loops a second)
// and bench/loop-cpu.ts (the server's CPU per loop).
import { request } from "undici";
import { createTollgate } from "../sdk/src/index.ts";
import type { BenchOperator } from "./approver.ts";
import type { BenchServer } from "./server.ts";

export type LoopKind = "sdk" | "http";

/**
 * A plain JSON call over HTTP/1.1 with the connection kept alive, as curl or
 * any language makes it: sent through undici's `request`, not Node's fetch,
 * whose Request, Response, web streams and abort signals cost the load
 * generator more CPU per loop than the SDK's whole loop (3.7 against 1.7 ms),
 * CPU the server then did not have on a 2-core machine. The requests on the
 * wire are the same.
 */
export function plainCall(server: Pick<BenchServer, "url" | "agentKey">) {
  const headers = { authorization: `Bearer ${server.agentKey}`, "content-type": "application/json" };
  const base = `${server.url}/api/trpc/`;
  const call = async <T>(path: string, url: string, options: { method: "GET" } | { method: "POST"; body: string }): Promise<T> => {
    const answer = await request(url, { ...options, headers });
    const body = (await answer.body.json()) as { result?: { data: T }; error?: unknown };
    if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
    return body.result.data;
  };
  return {
    mutate: <T>(path: string, input: unknown) => call<T>(path, base + path, { method: "POST", body: JSON.stringify(input) }),
    query: <T>(path: string, input: unknown) => call<T>(path, `${base}${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { method: "GET" }),
  };
}

export type PlainCall = ReturnType<typeof plainCall>;
type Asked = { approvalId: string; status: string };

/** Asks over plain HTTP and long-polls approval.await until decided. */
export async function askOverHttp(http: PlainCall, requestId: string, args: unknown): Promise<Asked> {
  let answer = await http.mutate<Asked>("approval.request", { requestId, tool: "send_email", args });
  while (answer.status === "PENDING") answer = await http.query<Asked>("approval.await", { approvalId: answer.approvalId, timeoutMs: 55_000 });
  return answer;
}

/**
 * Approves every ask in `sessionId` the moment the operator's socket hears
 * it; a failed decision is sent again (the same decision again is answered
 * with the stored one) up to three times, and said, not hidden: its agent
 * would wait for ever. Returns the function that stops approving.
 */
export function approveEveryAsk(operator: BenchOperator, sessionId: string, report: (text: string) => void): () => void {
  const decide = (approvalId: string, attempt: number): void => {
    void operator.client.approval.decide.mutate({ approvalId, action: "approve" }).catch((error: unknown) => {
      report(`a decision failed (attempt ${attempt}): ${String(error)}`);
      if (attempt < 3) decide(approvalId, attempt + 1);
    });
  };
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId === sessionId) decide(event.approvalId, 1);
  };
  operator.socket.on("approval:requested", onRequested);
  return () => operator.socket.off("approval:requested", onRequested);
}

/** Agents of one kind in a session of their own, approved by `operator`: `loop(agent)` runs one full loop. */
export async function loopingAgents(server: BenchServer, operator: BenchOperator, kind: LoopKind, report: (text: string) => void) {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey, push: kind === "sdk" });
  const http = plainCall(server);
  const { sessionId } = await sdk.openSession({ title: `bench: ${kind} loops` });
  const stopApproving = approveEveryAsk(operator, sessionId, report);
  return {
    async loop(agent: number): Promise<void> {
      if (kind === "sdk") {
        const request = await sdk.begin({ sessionId, agent: `loop-${agent}` });
        if ((await sdk.ask({ requestId: request.requestId, tool: "send_email", args: { agent } })).status !== "APPROVED") throw new Error("a loop was not approved");
        await request.complete();
      } else {
        const { requestId } = await http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: `loop-${agent}` });
        if ((await askOverHttp(http, requestId, { agent })).status !== "APPROVED") throw new Error("a loop was not approved");
        await http.mutate("request.complete", { requestId });
      }
    },
    close(): void {
      stopApproving();
      sdk.close();
    },
  };
}
