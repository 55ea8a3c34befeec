// Approvals reach people where they are: a real SMTP server and a real HTTP
// receiver started here get what a running Tollgate sends about approvals that
// wait for a person, with routing, digests, retries and escalation.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../server/domain/webhook.ts";
import { escalateDueApprovals } from "../server/services/notifications/escalate-approvals.ts";
import { newId } from "../server/domain/ids.ts";
import { hashPassword } from "../server/services/auth.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

const PUBLIC_URL = "https://tollgate.example.test";

interface Mailbox {
  url: string;
  mails: ParsedMail[];
  close(): Promise<void>;
}

async function startMailbox(): Promise<Mailbox> {
  const mails: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, done) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          done();
        })
        .catch(done);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface Posted {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  posts: Posted[];
  /** The statuses to answer requests to paths under `prefix` with, in order; then 200. */
  failNext(prefix: string, ...statuses: number[]): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const posts: Posted[] = [];
  const failures: Array<{ prefix: string; status: number }> = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const failure = failures.findIndex((entry) => (req.url ?? "").startsWith(entry.prefix));
      const status = failure >= 0 ? failures.splice(failure, 1)[0]!.status : 200;
      if (status === 200) posts.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    failNext: (prefix, ...statuses) => failures.push(...statuses.map((status) => ({ prefix, status }))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Polls until `check` returns a value (the server delivers in the background). */
async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let mailbox: Mailbox;
let receiver: Receiver;
let test: TestServer;
let admin: OperatorClient;
const sdk = () => agentSdk(test.url);

async function askFor(tool: string, args: Record<string, string | number> = {}, agent = "mailer") {
  const client = sdk();
  const { sessionId } = await client.openSession({});
  const begun = await client.begin({ sessionId, agent });
  const asked = await client.call("approval.request", { requestId: begun.requestId, tool, args, reason: `please ${tool}` });
  client.close();
  return asked.approvalId;
}

const mailsAbout = (approvalId: string) => mailbox.mails.filter((mail) => mail.text?.includes(`/approvals/${approvalId}`));

beforeAll(async () => {
  mailbox = await startMailbox();
  receiver = await startReceiver();
  test = await startTestServer({ TOLLGATE_SMTP_URL: mailbox.url, TOLLGATE_SMTP_FROM: "Tollgate <tollgate@example.test>", TOLLGATE_PUBLIC_URL: PUBLIC_URL });
  admin = await operatorClient(test.url);
  await joinByEmail("olive@example.com", "Olive", "OPERATOR", "olive's password");
  await joinByEmail("vic@example.com", "Vic", "VIEWER", "vic's password");
});

/** The invitation mailed to `email` last: its link. */
function invitationLinkMailedTo(email: string): string {
  const mail = mailbox.mails.filter((candidate) => candidate.subject?.startsWith("Invitation to") && JSON.stringify(candidate.to).includes(email)).at(-1);
  if (!mail) throw new Error(`no invitation was mailed to ${email}`);
  return /Accept: (\S+)/.exec(mail.text ?? "")![1]!;
}

/** A person invited by the admin, who accepts with the link from the email. */
async function joinByEmail(email: string, name: string, role: "OPERATOR" | "VIEWER" | "ADMIN", password: string) {
  const sent = await admin.operator.create.mutate({ email, name, role });
  expect(sent).toMatchObject({ emailed: true, link: null, emailError: null });
  const link = invitationLinkMailedTo(email);
  const accepted = await callHttp(test.url, "auth.acceptInvitation", "mutation", { token: link.slice(link.indexOf("#") + 1), password }, {});
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  return link;
}

describe("invitations by email", () => {
  it("invitations: operator.create emails the same invitation to an address with an account and to one without; each joins with the link, once", async () => {
    // olga has an account, in a workspace of her own; nobody has newcomer's address.
    const prisma = test.server.database.prisma;
    const elsewhere = newId("ws");
    const accountId = newId("acc");
    await prisma.workspace.create({ data: { id: elsewhere, name: "Elsewhere" } });
    await prisma.account.create({ data: { id: accountId, email: "olga@example.com", passwordHash: await hashPassword("olga's password") } });
    await prisma.operator.create({ data: { id: newId("op"), workspaceId: elsewhere, accountId, email: "olga@example.com", name: "Olga", role: "ADMIN" } });
    {
      const forOlive = await admin.operator.create.mutate({ email: "olga@example.com", name: "O", role: "VIEWER" });
      const forNewcomer = await admin.operator.create.mutate({ email: "newcomer@example.com", name: "O", role: "VIEWER" });
      const answer = ({ invitationId: _i, email: _e, createdAt: _c, expiresAt: _x, ...rest }: typeof forOlive) => rest;
      expect(answer(forOlive)).toEqual(answer(forNewcomer));
      const oliveLink = invitationLinkMailedTo("olga@example.com");
      const newcomerLink = invitationLinkMailedTo("newcomer@example.com");
      const mailOf = (email: string) => mailbox.mails.filter((mail) => JSON.stringify(mail.to).includes(email)).at(-1)!;
      expect(mailOf("olga@example.com").text!.replace(oliveLink, "<link>")).toBe(mailOf("newcomer@example.com").text!.replace(newcomerLink, "<link>"));
      expect(oliveLink.startsWith(`${PUBLIC_URL}/invite#tgi_`)).toBe(true);
      expect((await admin.operator.invitations.query()).items.map((item) => item.email).sort()).toEqual(["newcomer@example.com", "olga@example.com"]);

      const accept = (link: string, password: string) => callHttp(test.url, "auth.acceptInvitation", "mutation", { token: link.slice(link.indexOf("#") + 1), password }, {});
      expect((await accept(newcomerLink, "short")).status).toBe(400);
      expect((await accept(newcomerLink, "newcomer's own password")).status).toBe(200);
      expect((await accept(oliveLink, "a guess")).status).toBe(401);
      expect((await accept(oliveLink, "olga's password")).status).toBe(200);
      expect((await accept(oliveLink, "olga's password")).status).toBe(404);
      const newcomer = await operatorClient(test.url, { email: "newcomer@example.com", password: "newcomer's own password" });
      expect((await newcomer.auth.me.query()).operator.role).toBe("VIEWER");
      expect((await admin.operator.invitations.query()).items).toEqual([]);
      // Nobody's token is kept in the clear.
      const tokens = [oliveLink, newcomerLink].map((link) => link.slice(link.indexOf("#") + 1));
      const stored = JSON.stringify(await test.server.database.prisma.invitation.findMany());
      for (const token of tokens) expect(stored).not.toContain(token);
    }
  });
});
afterAll(async () => {
  await test?.close();
  await mailbox?.close();
  await receiver?.close();
});

describe("email with only TOLLGATE_SMTP_URL set (no channel configured)", () => {
  it("notify: everyone who can decide is emailed about a new approval, in text and HTML, with what is asked and a link; the approval says so", async () => {
    await admin.policy.create.mutate({ name: "mail waits 15 min", match: { tool: "send_email" }, outcome: "require", timeoutMs: 900_000 });
    const approvalId = await askFor("send_email", { to: "customer@example.com", subject: "Your refund" });
    const [mail] = await eventually(() => (mailsAbout(approvalId).length ? mailsAbout(approvalId) : undefined), "the email");
    expect(mail!.subject).toMatch(/^Approval needed: send_email by mailer \(expires \d{4}-\d\d-\d\d \d\d:\d\d UTC\)$/);
    expect(mail!.from?.text).toContain("tollgate@example.test");
    // A viewer cannot decide, so is not asked.
    expect([...(Array.isArray(mail!.to) ? mail!.to : [mail!.to!])].flatMap((to) => to.value.map((address) => address.address)).sort()).toEqual(["admin@example.com", "olive@example.com"]);
    for (const part of [mail!.text!, mail!.html as string]) {
      expect(part).toContain(`${PUBLIC_URL}/approvals/${approvalId}`);
      expect(part).toContain("customer@example.com");
      expect(part).toContain("please send_email");
    }
    const sent = await eventually(async () => {
      const { items } = await admin.notification.ofApproval.query({ approvalId });
      return items[0]?.status === "DELIVERED" ? items : undefined;
    }, "the delivery record");
    expect(sent).toEqual([
      expect.objectContaining({ channel: "approvers' email", kind: "EMAIL", reason: "REQUESTED", status: "DELIVERED", attempts: 1, recipients: ["admin@example.com", "olive@example.com"], deliveredAt: expect.any(String) }),
    ]);
  });

  it("notify: an approval a rule decides at once announces nothing", async () => {
    await admin.policy.create.mutate({ name: "lookups run", match: { tool: "lookup" }, outcome: "approve" });
    const approvalId = await askFor("lookup");
    expect((await admin.notification.ofApproval.query({ approvalId })).items).toEqual([]);
  });

  it("routing: a rule that asks a group emails only its members, and their inbox lists it first, marked as asked of them", async () => {
    const { items: operators } = await admin.operator.list.query();
    const olive = operators.find((operator) => operator.email === "olive@example.com")!;
    await admin.operator.setGroups.mutate({ operatorId: olive.id, groups: ["finance"] });
    await admin.policy.create.mutate({ name: "refunds ask finance", match: { tool: "refund" }, outcome: "require", route: { to: { group: "finance" } } });
    const older = await askFor("send_email", { to: "x@example.com" });
    const approvalId = await askFor("refund", { amount: 120 });
    const [mail] = await eventually(() => (mailsAbout(approvalId).length ? mailsAbout(approvalId) : undefined), "the email to finance");
    expect((Array.isArray(mail!.to) ? mail!.to[0]! : mail!.to!).value.map((address) => address.address)).toEqual(["olive@example.com"]);
    expect(mail!.text).toContain("Asked of: group finance");

    const asOlive = await operatorClient(test.url, { email: "olive@example.com", password: "olive's password" });
    const { items } = await asOlive.approval.list.query({ status: "PENDING", limit: 100 });
    expect(items[0]).toMatchObject({ approvalId, askedOfYou: true, asked: { group: "finance", escalationLevel: 0 } });
    expect(items.find((item) => item.approvalId === older)).toMatchObject({ askedOfYou: false });
    // The admin is not in finance: nothing is asked of them by name, so theirs stays newest first.
    expect((await admin.approval.list.query({ status: "PENDING", limit: 100 })).items[0]).toMatchObject({ approvalId, askedOfYou: false });
  });

  it("escalation: nobody decided in time, so the next audience is emailed, recorded on the approval and in the audit log, once across concurrent sweeps", async () => {
    await admin.policy.create.mutate({
      name: "payments escalate",
      match: { tool: "pay_invoice" },
      outcome: "require",
      timeoutMs: 3_600_000,
      route: { to: { group: "finance" }, escalate: [{ afterSeconds: 600, to: { role: "ADMIN" } }], remindBeforeExpirySeconds: 300 },
    });
    const approvalId = await askFor("pay_invoice", { invoice: "INV-7", amount: 4200 });
    await eventually(() => (mailsAbout(approvalId).length ? true : undefined), "the first email");

    const realNow = test.server.deps.now;
    try {
      // Eleven minutes later, two nodes sweep at once (and the server's own sweep may join): one escalation.
      test.server.deps.now = () => new Date(realNow().getTime() + 11 * 60_000);
      await Promise.all([escalateDueApprovals(test.server.deps), escalateDueApprovals(test.server.deps)]);
      const escalated = await eventually(() => mailsAbout(approvalId).find((mail) => mail.subject?.startsWith("Escalated")), "the escalation email");
      expect((Array.isArray(escalated.to) ? escalated.to[0]! : escalated.to!).value.map((address) => address.address)).toEqual(["admin@example.com"]);
      const approval = await admin.approval.get.query({ approvalId });
      expect(approval.asked).toEqual({ role: "ADMIN", operators: [], group: null, escalationLevel: 1 });
      const audit = await admin.audit.list.query({ subjectId: approvalId, action: "approval.escalated" });
      expect(audit.items).toEqual([expect.objectContaining({ data: expect.objectContaining({ level: 1, askedOf: expect.objectContaining({ role: "ADMIN" }) }) })]);

      // Five minutes before expiry: announced once more, once.
      test.server.deps.now = () => new Date(realNow().getTime() + 56 * 60_000);
      await Promise.all([escalateDueApprovals(test.server.deps), escalateDueApprovals(test.server.deps)]);
      await eventually(() => mailsAbout(approvalId).find((mail) => mail.subject?.startsWith("Expiring soon")), "the reminder");
    } finally {
      test.server.deps.now = realNow;
    }
    const { items } = await admin.notification.ofApproval.query({ approvalId });
    expect(items.map((item) => [item.reason, item.level])).toEqual([
      ["REQUESTED", 0],
      ["ESCALATED", 1],
      ["EXPIRING", 0],
    ]);
  });
});

describe("channels", () => {
  let signingSecret: string;
  let webhookChannelId: string;

  it("channels: a Slack-compatible webhook gets Block Kit with a link; a JSON webhook gets the data, signed with the secret shown once", async () => {
    await admin.notification.createChannel.mutate({ name: "ops-slack", kind: "SLACK", url: `${receiver.url}/slack/T000/B000/secretpath` });
    const created = await admin.notification.createChannel.mutate({ name: "pager", kind: "WEBHOOK", url: `${receiver.url}/hooks/tollgate` });
    signingSecret = created.signingSecret!;
    webhookChannelId = created.channel.channelId;
    expect(signingSecret).toMatch(/^whsec_/);
    expect(created.channel).toMatchObject({ kind: "WEBHOOK", urlOrigin: receiver.url, signed: true });

    const approvalId = await askFor("send_email", { to: "c@example.com" });
    const slack = await eventually(() => receiver.posts.find((post) => post.path.startsWith("/slack") && post.body.includes(approvalId)), "the Slack message");
    const message = JSON.parse(slack.body);
    expect(message.text).toBe("Approval needed: send_email by mailer");
    expect(JSON.stringify(message.blocks)).toContain(`"url":"${PUBLIC_URL}/approvals/${approvalId}"`);

    const hook = await eventually(() => receiver.posts.find((post) => post.path === "/hooks/tollgate" && post.body.includes(approvalId)), "the webhook");
    expect(verifyWebhookSignature(signingSecret, hook.body, hook.headers["tollgate-signature"] as string, Date.now())).toBe(true);
    expect(JSON.parse(hook.body)).toMatchObject({ type: "approval.requested", approvals: [{ approvalId, tool: "send_email", args: { to: "c@example.com" }, link: `${PUBLIC_URL}/approvals/${approvalId}` }] });

    // With channels configured, the default email no longer applies.
    expect(mailsAbout(approvalId)).toEqual([]);
    // The URL's path and the signing secret are secrets: not in the database in the clear, not in the API.
    const row = await test.server.deps.prisma.notificationChannel.findUniqueOrThrow({ where: { id: webhookChannelId } });
    expect(JSON.stringify(row)).not.toContain("/hooks/tollgate");
    expect(JSON.stringify(row)).not.toContain(signingSecret);
    expect(JSON.stringify(await admin.notification.channels.query())).not.toContain("secretpath");
  });

  it("channels: a receiver that fails is retried with backoff until it answers, and the approval shows the attempts", async () => {
    await admin.notification.updateChannel.mutate({ channelId: webhookChannelId, enabled: true });
    receiver.failNext("/hooks/tollgate", 500, 503);
    const approvalId = await askFor("send_email", { to: "retry@example.com" });
    const delivered = await eventually(async () => {
      const { items } = await admin.notification.ofApproval.query({ approvalId });
      const pager = items.find((item) => item.channel === "pager");
      return pager?.status === "DELIVERED" ? pager : undefined;
    }, "the retried webhook");
    expect(delivered.attempts).toBeGreaterThanOrEqual(2);
    expect(receiver.posts.filter((post) => post.path === "/hooks/tollgate" && post.body.includes(approvalId))).toHaveLength(1);
  });

  it("digest: a burst of 30 approvals becomes a few messages, and every approval is announced exactly once", async () => {
    await admin.notification.updateChannel.mutate({ channelId: webhookChannelId, digestThreshold: 3, digestWindowSeconds: 2 });
    const slack = (await admin.notification.channels.query()).channels.find((channel) => channel.name === "ops-slack")!;
    await admin.notification.updateChannel.mutate({ channelId: slack.channelId, enabled: false });
    const before = receiver.posts.length;
    const askingFrom = Date.now();
    const approvalIds = await Promise.all(Array.from({ length: 30 }, (_, index) => askFor("send_email", { to: `burst${index}@example.com` })));
    const askedForMs = Date.now() - askingFrom;
    const announced = await eventually(() => {
      const ids = receiver.posts.slice(before).flatMap((post) => (JSON.parse(post.body) as { approvals: { approvalId: string }[] }).approvals.map((approval) => approval.approvalId));
      return ids.length >= 30 ? ids : undefined;
    }, "every approval announced", 20_000);
    expect(announced.sort()).toEqual([...approvalIds].sort());
    const messages = receiver.posts.slice(before);
    // At most 3 messages a window (a digest counts once), over the windows the
    // asks took to arrive and the one after them, whose digest takes the rest:
    // 6 when the burst lands within one window, more on a machine that spreads it.
    const windows = Math.ceil(askedForMs / 2000) + 1;
    expect(messages.length).toBeLessThanOrEqual(3 * windows);
    expect(messages.some((post) => JSON.parse(post.body).type === "approval.digest")).toBe(true);
  });

  it("channels: bad settings are refused with the field named, and only admins change channels", async () => {
    await expect(admin.notification.createChannel.mutate({ name: "metadata", kind: "WEBHOOK", url: "http://169.254.169.254/latest" })).rejects.toMatchObject({
      data: { httpStatus: 400 },
      message: expect.stringContaining("url is refused"),
    });
    await expect(admin.notification.createChannel.mutate({ name: "pager", kind: "WEBHOOK", url: `${receiver.url}/x` })).rejects.toMatchObject({ data: { httpStatus: 409 }, message: expect.stringContaining('"pager" already exists') });
    await expect(admin.notification.createChannel.mutate({ name: "no-url", kind: "SLACK" })).rejects.toMatchObject({ data: { httpStatus: 400 }, message: expect.stringContaining("url:") });
    await expect(admin.policy.create.mutate({ name: "to nowhere", match: { tool: "x" }, outcome: "require", route: { channels: ["nowhere"] } })).rejects.toMatchObject({
      data: { httpStatus: 400 },
      message: 'route.channels: there is no notification channel named "nowhere" in this workspace',
    });
    await expect(admin.policy.create.mutate({ name: "approve routed", match: { tool: "x" }, outcome: "approve", route: { to: { role: "ADMIN" } } })).rejects.toMatchObject({ data: { httpStatus: 400 }, message: expect.stringContaining("route:") });
    const asOlive = await operatorClient(test.url, { email: "olive@example.com", password: "olive's password" });
    await expect(asOlive.notification.createChannel.mutate({ name: "mine", kind: "EMAIL" })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    expect((await asOlive.notification.channels.query()).channels.map((channel) => channel.name)).toEqual(["ops-slack", "pager"]);
  });
});
