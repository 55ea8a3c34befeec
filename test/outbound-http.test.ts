// Outbound requests against real receivers on loopback: a server with no
// allowlist refuses them (at request.begin for literal addresses, at delivery
// for names that resolve to refused addresses), and the receiver never sees a
// request; the allowlist and the pinned address let the intended ones through.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOutbound } from "../server/net/outbound.ts";
import { parseAllowlist } from "../server/domain/outbound.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { startTestServer, type TestServer } from "./server.ts";

interface Receiver {
  url: string;
  seen: IncomingMessage[];
  answer: (status: number, headers?: Record<string, string>) => void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const seen: IncomingMessage[] = [];
  let reply = { status: 200, headers: {} as Record<string, string> };
  const server: Server = createServer((req, res) => {
    seen.push(req);
    req.resume();
    req.on("end", () => res.writeHead(reply.status, reply.headers).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    answer: (status, headers = {}) => (reply = { status, headers }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  receiver.seen.length = 0;
  receiver.answer(200);
});

describe("outbound guard (no network between resolve and connect)", () => {
  const send = (outbound: ReturnType<typeof createOutbound>, url: string) => outbound.post(url, { headers: { "content-type": "application/json" }, body: "{}" });

  it("outbound: a name that resolves to a private address is refused, and nothing is sent", async () => {
    const outbound = createOutbound({ allow: [], resolver: async () => [{ address: "10.0.0.1", family: 4 }] });
    expect(await send(outbound, "http://hooks.example.com/")).toEqual({ ok: false, refused: true, error: expect.stringContaining("10.0.0.1 is a private address") });
  });

  it("outbound: a name with one public and one loopback address is refused (every address is checked)", async () => {
    const port = new URL(receiver.url).port;
    const outbound = createOutbound({
      allow: [],
      resolver: async () => [
        { address: "93.184.215.14", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
    });
    expect(await send(outbound, `http://rebind.example.com:${port}/`)).toMatchObject({ ok: false, refused: true });
    expect(receiver.seen).toHaveLength(0);
  });

  it("outbound: the connection goes to the address that was checked, not to a second lookup", async () => {
    // receiver.test does not exist in any DNS: only the pinned address can reach the receiver.
    const port = new URL(receiver.url).port;
    const outbound = createOutbound({ allow: parseAllowlist("receiver.test"), resolver: async () => [{ address: "127.0.0.1", family: 4 }] });
    expect(await send(outbound, `http://receiver.test:${port}/hook`)).toEqual({ ok: true, status: 200 });
    expect(receiver.seen.map((req) => [req.method, req.url, req.headers.host])).toEqual([["POST", "/hook", `receiver.test:${port}`]]);
  });

  it("outbound: a redirect is not followed, even to an allowed receiver", async () => {
    receiver.answer(302, { location: "http://169.254.169.254/latest/meta-data/" });
    const outbound = createOutbound({ allow: parseAllowlist("127.0.0.1") });
    expect(await send(outbound, `${receiver.url}/hook`)).toMatchObject({ ok: false, refused: false, status: 302, error: expect.stringContaining("not followed") });
    expect(receiver.seen).toHaveLength(1);
  });
});

describe("outbound through the server, without an allowlist", () => {
  let test: TestServer;
  let operator: OperatorClient;
  beforeAll(async () => {
    // Names ending in .internal.test resolve to a private address; nothing else is asked.
    test = await startTestServer({ TOLLGATE_OUTBOUND_ALLOW: "" }, { resolver: async () => [{ address: "10.20.30.40", family: 4 }] });
    operator = await operatorClient(test.url);
  });
  afterAll(() => test?.close());

  it.each(["http://127.0.0.1:9/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://localhost/"])(
    "outbound: request.begin refuses resumeUrl %s with a 400 naming it",
    async (resumeUrl) => {
      const sdk = agentSdk(test.url);
      const { sessionId } = await sdk.openSession({});
      await expect(sdk.begin({ sessionId, agent: "mailer", resumeUrl })).rejects.toMatchObject({
        data: { code: "BAD_REQUEST", httpStatus: 400 },
        message: expect.stringContaining("resumeUrl is refused"),
      });
    },
  );

  it("outbound: a webhook to a name that resolves to a private address fails at once, unsent, and says why", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer", resumeUrl: "http://metadata.internal.test/hook" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    let delivery = await test.server.deps.prisma.decisionDelivery.findFirstOrThrow({ where: { approvalId: asked.approvalId } });
    for (let tries = 0; delivery.status === "PENDING" && tries < 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      delivery = await test.server.deps.prisma.decisionDelivery.findFirstOrThrow({ where: { approvalId: asked.approvalId } });
    }
    expect(delivery).toMatchObject({ status: "FAILED", attempts: 1, lastError: expect.stringContaining("10.20.30.40 is a private address") });
    sdk.close();
  });
});
