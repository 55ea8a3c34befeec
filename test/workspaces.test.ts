// Several workspaces per person: an admin makes a workspace and becomes its
// admin; one account (one email, one password) belongs to each workspace
// through a membership with its own role; a browser session moves between
// them, and everything it sees follows the workspace it is in.
import { createTRPCClient, httpLink } from "@trpc/client";
import { describe, expect, it } from "vitest";
import type { AppRouter } from "../server/api/router.ts";
import { addPerson, agentSdk, invitationToken, operatorClient, type OperatorClient } from "./clients.ts";
import { ADMIN } from "./harness.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
useTestServer((server, client) => {
  test = server;
  admin = client;
});

/** A signed-in browser: keeps whatever session cookie the server last set, as Chromium does. */
async function browser(credentials: { email: string; password: string }) {
  const jar = { cookie: "" };
  const keepCookie: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const set = response.headers.get("set-cookie");
    if (set) jar.cookie = set.split(";")[0]!;
    return response;
  };
  const client = createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${test.url}/api/trpc`, fetch: keepCookie, headers: () => ({ cookie: jar.cookie, origin: test.url }) })],
  });
  await client.auth.login.mutate(credentials);
  return { client, jar };
}

const uniqueEmail = (who: string) => `${who}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describe("workspaces", () => {
  it("an admin creates a workspace, becomes its admin, switches into it, and sees only its rows there", async () => {
    const { client, jar } = await browser(ADMIN);
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({ title: "made in the first workspace" });
    sdk.close();

    const firstOperatorId = (await client.auth.me.query()).operator.id;
    const made = await client.workspace.create.mutate({ name: "Payments team" });
    expect(made).toMatchObject({ name: "Payments team", role: "ADMIN" });
    const before = (await client.workspace.list.query()).items;
    expect(before.map((workspace) => [workspace.name, workspace.current])).toContainEqual(["Payments team", false]);

    const oldCookie = jar.cookie;
    const switched = await client.auth.switchWorkspace.mutate({ workspaceId: made.id });
    expect(switched.workspace).toEqual({ id: made.id, name: "Payments team" });
    expect(switched.operator).toMatchObject({ email: ADMIN.email, role: "ADMIN" });
    expect(jar.cookie).not.toBe(oldCookie);
    // The session it left has ended.
    expect((await callHttp(test.url, "auth.me", "query", {}, { cookie: oldCookie, origin: test.url })).status).toBe(401);

    expect((await client.workspace.list.query()).items.find((workspace) => workspace.current)?.id).toBe(made.id);
    expect((await client.session.list.query({})).items.map((session) => session.id)).not.toContain(sessionId);
    expect((await client.operator.list.query()).items.map((operator) => operator.email)).toEqual([ADMIN.email]);
    const entries = (await client.audit.list.query({ action: "workspace.created" })).items;
    expect(entries.map((entry) => entry.subjectId)).toEqual([made.id]);
    // The new workspace's log names only itself: nothing of the workspace it was made from.
    const firstWorkspace = before.find((workspace) => workspace.current)!;
    const everyEntry = JSON.stringify((await client.audit.list.query({})).items);
    expect(everyEntry).not.toContain(firstWorkspace.id);
    expect(everyEntry).not.toContain(firstOperatorId);
    // An agent key made here works here only.
    const { key } = await client.agentKey.create.mutate({ name: "payments agents" });
    const paymentsAgent = agentSdk(test.url, key);
    await expect(paymentsAgent.openSession({ sessionId })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
    paymentsAgent.close();

    // And back: the first workspace's rows again.
    const first = before.find((workspace) => workspace.current)!;
    await client.auth.switchWorkspace.mutate({ workspaceId: first.id });
    expect((await client.session.list.query({})).items.map((session) => session.id)).toContain(sessionId);
  });

  it("one account, two memberships: invited to the second, they accept with their own password; a role of its own in each, login lands where they last worked", async () => {
    const email = uniqueEmail("both");
    const password = "one password for both";
    const { client: founder } = await browser(ADMIN);
    const second = await founder.workspace.create.mutate({ name: "Second" });
    await addPerson(test.url, admin, { email, name: "Both", role: "VIEWER", password });
    await founder.auth.switchWorkspace.mutate({ workspaceId: second.id });

    // The invitation reads the same for an address with an account and one without.
    const invited = await founder.operator.create.mutate({ email, name: "Both", role: "OPERATOR" });
    const stranger = await founder.operator.create.mutate({ email: uniqueEmail("new"), name: "Both", role: "OPERATOR" });
    const shape = ({ invitationId: _id, email: _email, link, createdAt: _c, expiresAt: _e, ...rest }: typeof invited) => ({ ...rest, link: link?.replace(/#.*/, "#") });
    expect(shape(invited)).toEqual(shape(stranger));
    // Only their own password accepts it for an existing account; a wrong one adds nothing.
    const accept = (token: string, withPassword: string) => callHttp(test.url, "auth.acceptInvitation", "mutation", { token, password: withPassword }, {});
    const refused = await accept(invitationToken(invited.link), "an admin's guess");
    expect(refused.status).toBe(401);
    expect((await founder.operator.list.query()).items.map((operator) => operator.email)).not.toContain(email);
    const accepted = await accept(invitationToken(invited.link), password);
    expect(accepted.status).toBe(200);
    const membership = accepted.body.result.data.operator as { id: string };
    // Used once.
    expect((await accept(invitationToken(invited.link), password)).status).toBe(404);
    await expect(founder.operator.create.mutate({ email, name: "Both", role: "OPERATOR" })).rejects.toMatchObject({ data: { code: "CONFLICT" } });

    const { client: person } = await browser({ email, password });
    const workspaces = (await person.workspace.list.query()).items;
    expect(workspaces.map((workspace) => [workspace.name, workspace.role]).sort()).toEqual([["Second", "OPERATOR"], [expect.any(String), "VIEWER"]].sort());
    // Accepting signed them in to Second: login lands there, the workspace used last.
    expect((await person.auth.me.query()).operator).toMatchObject({ id: membership.id, role: "OPERATOR" });
    const first = workspaces.find((workspace) => workspace.id !== second.id)!;
    await person.auth.switchWorkspace.mutate({ workspaceId: first.id });
    expect((await person.auth.me.query()).operator.role).toBe("VIEWER");
    await person.auth.switchWorkspace.mutate({ workspaceId: second.id });
    expect((await person.auth.me.query()).operator).toMatchObject({ id: membership.id, role: "OPERATOR" });

    // The next login lands in the workspace used last.
    const { client: again } = await browser({ email, password });
    expect((await again.auth.me.query()).operator.id).toBe(membership.id);

    // Neither workspace's admin may set the shared password; the person may change it themselves.
    await expect(founder.operator.resetPassword.mutate({ operatorId: membership.id, password: "taken over now" })).rejects.toMatchObject({
      data: { code: "CONFLICT" },
      message: expect.stringMatching(/also works in another workspace/),
    });
    const { sessionsEnded } = await again.auth.changePassword.mutate({ currentPassword: password, newPassword: "a new password of mine" });
    // person's session, and the one each acceptance of an invitation signed in.
    expect(sessionsEnded).toBe(3);
    await expect(person.auth.me.query()).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    await expect(browser({ email, password })).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    expect((await again.auth.me.query()).operator.id).toBe(membership.id);

    // Disabled in one workspace: login lands in the other; the disabled one is not offered or reachable.
    await founder.operator.setDisabled.mutate({ operatorId: membership.id, disabled: true });
    const { client: afterDisable } = await browser({ email, password: "a new password of mine" });
    expect((await afterDisable.auth.me.query()).operator.role).toBe("VIEWER");
    expect((await afterDisable.workspace.list.query()).items.map((workspace) => workspace.id)).not.toContain(second.id);
    await expect(afterDisable.auth.switchWorkspace.mutate({ workspaceId: second.id })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
  });

  it("an invitation is used once: of two acceptances that both read it unused, one joins and the other is told the link was used; a used link checks no password", async () => {
    const email = uniqueEmail("twice");
    const password = "the one they chose";
    const invited = await admin.operator.create.mutate({ email, name: "Twice", role: "VIEWER" });
    const accept = (withPassword: string) => callHttp(test.url, "auth.acceptInvitation", "mutation", { token: invitationToken(invited.link), password: withPassword }, {});

    // Each acceptance reaches the throttle after reading the invitation unused; both wait there
    // until both have read it, so the write alone decides which one takes it.
    const { deps } = test.server;
    const throttle = deps.loginThrottle;
    let release!: () => void;
    const bothRead = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    deps.loginThrottle = {
      async reserve(...args) {
        if (++arrived === 2) release();
        await bothRead;
        return throttle.reserve(...args);
      },
    };
    try {
      const answers = await Promise.all([accept(password), accept(password)]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 404]);
    } finally {
      deps.loginThrottle = throttle;
    }
    const joined = await deps.prisma.operator.findMany({ where: { email } });
    expect(joined).toHaveLength(1);

    // Once used, the link answers as unknown before any password is checked: it tells nothing of the account's.
    const again = await accept("a guess at their password");
    expect(again.status).toBe(404);
    expect(again.body.error.message).toMatch(/this invitation link is not valid/);
  });

  it("switching: a workspace the person is not in is NOT_FOUND; a token stays in its workspace; viewers cannot create workspaces", async () => {
    const { client: founder } = await browser(ADMIN);
    const theirs = await founder.workspace.create.mutate({ name: "Not yours" });
    const email = uniqueEmail("viewer");
    await addPerson(test.url, admin, { email, name: "Viewer", role: "VIEWER", password: "viewer password 1" });
    const { client: viewer } = await browser({ email, password: "viewer password 1" });
    await expect(viewer.auth.switchWorkspace.mutate({ workspaceId: theirs.id })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
    await expect(viewer.auth.switchWorkspace.mutate({ workspaceId: "ws_0000000000000000000000" })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
    await expect(viewer.workspace.create.mutate({ name: "mine" })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });

    const { token } = await founder.auth.createToken.mutate({ name: "script", password: ADMIN.password });
    const refused = await callHttp(test.url, "auth.switchWorkspace", "mutation", { workspaceId: theirs.id }, { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/token belongs to the workspace it was minted in/);
  });
});
