// The MCP adapter (@tollgate/sdk/mcp) with the MCP SDK itself: a server's tool
// elicits input, the client's elicitation handler asks Tollgate a form approval,
// an operator answers over HTTP, and the server's tool gets accept (with the
// values), decline or cancel. The two ends talk through the SDK's in-memory
// transport; Tollgate is a real server.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { tollgateElicitation } from "../sdk/src/adapters/mcp.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

const MEETING = {
  type: "object",
  properties: {
    attendee: { type: "string", format: "email", title: "Who should attend" },
    minutes: { type: "integer", minimum: 15, maximum: 120 },
    room: { type: "string", enum: ["Ada", "Turing"] },
  },
  required: ["attendee", "minutes"],
} as const;

/**
 * An MCP server whose book_meeting tool elicits the meeting's details with a
 * 1-second request timeout (MCP's is 60 s; a person takes longer either way),
 * reset on progress; and a client whose elicitations go to Tollgate.
 */
async function connect(heartbeatMs: number | undefined) {
  const tollgate = agentSdk(test.url);
  const { sessionId } = await tollgate.openSession({ title: "mcp" });
  const request = await tollgate.begin({ sessionId, agent: "calendar-agent", framework: "mcp" });
  const progress: number[] = [];
  const elicited: ElicitResult[] = [];
  const server = new McpServer({ name: "calendar", version: "1.0.0" });
  server.registerTool("book_meeting", { description: "Books a meeting" }, async () => {
    const answer = await server.server.elicitInput(
      { mode: "form", message: "Book a meeting with **whom**?", requestedSchema: MEETING as never },
      { timeout: 1_000, resetTimeoutOnProgress: true, onprogress: (note) => progress.push(note.progress) },
    );
    elicited.push(answer);
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, tollgateElicitation({ tollgate, requestId: request.requestId, heartbeatMs }));
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverEnd), client.connect(clientEnd)]);
  const close = async () => {
    await client.close();
    await server.close();
    tollgate.close();
  };
  return { sessionId, request, client, progress, elicited, close };
}

async function pendingForm(sessionId: string) {
  const read = async () => (await operator.approval.list.query({ sessionId, status: "PENDING" })).items;
  await expect.poll(async () => (await read()).length, { timeout: 20_000 }).toBe(1);
  return (await read())[0]!;
}

describe("MCP adapter", () => {
  it("mcp: an elicitation is a form in Tollgate, outlives the server's request timeout while a person answers, and the tool gets accept with the values", async () => {
    const mcp = await connect(200);
    const called = mcp.client.callTool({ name: "book_meeting", arguments: {} });
    const approval = await pendingForm(mcp.sessionId);
    expect(approval).toMatchObject({ kind: "form", tool: "elicitation", summary: "Book a meeting with **whom**?", framework: "mcp", allow: ["edit", "reject"] });
    expect(Object.keys(approval.form!.properties)).toEqual(["attendee", "minutes", "room"]);
    // Longer than the server's 1 s timeout: its request stays alive on the handler's progress.
    await expect.poll(() => mcp.progress.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(8);
    await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "edit", args: { attendee: "ada@example.com", minutes: 30, room: "Ada" } });
    await called;
    expect(mcp.elicited).toEqual([{ action: "accept", content: { attendee: "ada@example.com", minutes: 30, room: "Ada" } }]);
    await mcp.close();
  });

  it("mcp: a person's rejection is decline, and a canceled approval is cancel", async () => {
    const mcp = await connect(200);
    const first = mcp.client.callTool({ name: "book_meeting", arguments: {} });
    const declined = await pendingForm(mcp.sessionId);
    await operator.approval.decide.mutate({ approvalId: declined.approvalId, action: "reject", message: "no meetings this week" });
    await first;
    const second = mcp.client.callTool({ name: "book_meeting", arguments: {} });
    const dismissed = await pendingForm(mcp.sessionId);
    await operator.task.cancel.mutate({ taskId: dismissed.taskId, reason: "the agent's work is stopped" });
    await second;
    expect(mcp.elicited).toEqual([{ action: "decline" }, { action: "cancel" }]);
    await mcp.close();
  });

  it("mcp: the same handler on a new connection, whose request ids start again, asks afresh instead of answering with an earlier decision", async () => {
    const tollgate = agentSdk(test.url);
    const { sessionId } = await tollgate.openSession({ title: "mcp reconnect" });
    const request = await tollgate.begin({ sessionId, agent: "calendar-agent", framework: "mcp" });
    const handler = tollgateElicitation({ tollgate, requestId: request.requestId });
    const answers: ElicitResult[] = [];
    for (const attendee of ["ada@example.com", "grace@example.com"]) {
      // A new server (as after a restart) on a new connection: its first request id again.
      const server = new McpServer({ name: "calendar", version: "1.0.0" });
      server.registerTool("book_meeting", { description: "Books a meeting" }, async () => {
        answers.push(await server.server.elicitInput({ mode: "form", message: "Book a meeting with **whom**?", requestedSchema: MEETING as never }));
        return { content: [] };
      });
      const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
      client.setRequestHandler(ElicitRequestSchema, handler);
      const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
      await Promise.all([server.connect(serverEnd), client.connect(clientEnd)]);
      const called = client.callTool({ name: "book_meeting", arguments: {} });
      const approval = await pendingForm(sessionId);
      await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "edit", args: { attendee, minutes: 30 } });
      await called;
      await client.close();
      await server.close();
    }
    expect(answers).toEqual([
      { action: "accept", content: { attendee: "ada@example.com", minutes: 30 } },
      { action: "accept", content: { attendee: "grace@example.com", minutes: 30 } },
    ]);
    tollgate.close();
  });
});
