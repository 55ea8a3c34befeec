// Operator and agent authentication through the router, on a fresh database.
import { afterEach, describe, expect, it, vi } from "vitest";
import { authenticateAgent, authenticateOperator, hashPassword, sha256 } from "../server/services/auth.ts";
import { newId } from "../server/domain/ids.ts";
import { ADMIN, AGENT_KEY, agentCaller, callerWith, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

describe("authentication", () => {
  it("bootstrap: an empty database gets one workspace, an admin, an agent key and audit entries", async () => {
    expect(await db.prisma.workspace.count()).toBe(1);
    const admin = await db.prisma.operator.findFirstOrThrow();
    expect(admin).toMatchObject({ email: ADMIN.email, role: "ADMIN" });
    const account = await db.prisma.account.findUniqueOrThrow({ where: { id: admin.accountId } });
    expect(account).toMatchObject({ email: ADMIN.email });
    expect(account.passwordHash).toMatch(/^\$argon2id\$/);
    const key = await db.prisma.agentKey.findFirstOrThrow();
    expect(key.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await db.prisma.auditEntry.count()).toBe(3);
  });

  it("login: the right password returns the operator and sets a session cookie", async () => {
    let cookie: string | null | undefined;
    const result = await callerWith(app.deps, { setSessionCookie: (token) => (cookie = token) }).auth.login(ADMIN);
    expect(result.operator).toMatchObject({ email: ADMIN.email, role: "ADMIN" });
    expect(cookie).toMatch(/^tgs_/);
  });

  it("login: a wrong password or unknown email is UNAUTHORIZED with the same message", async () => {
    const caller = callerWith(app.deps);
    await expect(caller.auth.login({ email: ADMIN.email, password: "wrong" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "email or password is wrong",
    });
    await expect(caller.auth.login({ email: "nobody@example.com", password: "wrong" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "email or password is wrong",
    });
  });

  it("operator procedures: without a session they are UNAUTHORIZED; with one they answer", async () => {
    await expect(callerWith(app.deps).session.list({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const operator = await operatorCaller(app.deps);
    expect(await operator.auth.me()).toMatchObject({ operator: { email: ADMIN.email } });
  });

  it("logout: the session stops working", async () => {
    const operator = await operatorCaller(app.deps);
    await operator.auth.logout();
    await expect(operator.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(/expired or was revoked/) });
  });

  it("session expiry: an expired session is UNAUTHORIZED, also the moment after a call that remembered it", async () => {
    const operator = await operatorCaller(app.deps);
    await operator.auth.me();
    const { expiresAt } = await db.prisma.operatorSession.findFirstOrThrow({ where: { revokedAt: null }, orderBy: { createdAt: "desc" } });
    const now = app.deps.now;
    app.deps.now = () => expiresAt;
    try {
      await expect(operator.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    } finally {
      app.deps.now = now;
    }
  });

  it("script tokens: an operator token works as a bearer token", async () => {
    const operator = await operatorCaller(app.deps);
    const { token } = await operator.auth.createToken({ name: "deploy", ttlHours: 1, password: ADMIN.password });
    expect(await callerWith(app.deps, { bearerToken: token }).auth.me()).toMatchObject({ operator: { email: ADMIN.email } });
  });

  it("agent keys: the bootstrap key opens a session; an unknown key is UNAUTHORIZED", async () => {
    const { sessionId } = await agentCaller(app.deps).session.open({ title: "checkout" });
    expect(await db.prisma.session.findUniqueOrThrow({ where: { id: sessionId } })).toMatchObject({ workspaceId: app.workspaceId, title: "checkout" });
    await expect(agentCaller(app.deps, "tgk_unknown_key_000000000").session.open({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("agent keys cannot call operator procedures, and operator sessions cannot act as agents", async () => {
    await expect(agentCaller(app.deps).session.list({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const operator = await operatorCaller(app.deps);
    await expect(operator.session.open({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("workspaces: an operator of another workspace sees none of this workspace's sessions", async () => {
    await agentCaller(app.deps).session.open({ title: "mine" });
    const otherWorkspace = newId("ws");
    await db.prisma.workspace.create({ data: { id: otherWorkspace, name: "other" } });
    const accountId = newId("acc");
    await db.prisma.account.create({ data: { id: accountId, email: "other@example.com", passwordHash: await hashPassword("other password") } });
    await db.prisma.operator.create({
      data: { id: newId("op"), workspaceId: otherWorkspace, accountId, email: "other@example.com", name: "Other", role: "ADMIN" },
    });
    const other = await operatorCaller(app.deps, { email: "other@example.com", password: "other password" });
    expect((await other.session.list({})).items).toEqual([]);
    const mine = await operatorCaller(app.deps);
    expect((await mine.session.list({})).items.map((s) => s.title)).toEqual(["mine"]);
  });
});

describe("remembered keys and sessions read again", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /**
   * Holds the database read `method` of `target` until `release` is called, so
   * that calls made one after another (in separate turns of the event loop, as
   * requests arrive) all find it in flight; `reads` counts the reads sent.
   */
  function holdReads<T extends object>(target: T, method: keyof T & string) {
    const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reads = vi.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
      await released;
      return original(...args);
    }) as never);
    return { reads, release };
  }

  /**
   * Lets the database read `method` of `target` run but holds its answer until
   * `release` is called; `answered` settles once the first read has run, so a
   * change made then comes after what that read saw.
   */
  function holdAnswers<T extends object>(target: T, method: keyof T & string) {
    const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const reads = vi.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
      const result = await original(...args);
      answer();
      await released;
      return result;
    }) as never);
    return { reads, release, answered };
  }

  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  /** `count` calls of `call`, each begun in a turn of the event loop of its own. */
  async function oneAfterAnother<T>(count: number, call: () => Promise<T>): Promise<Promise<T>[]> {
    const calls: Promise<T>[] = [];
    for (let n = 0; n < count; n++) {
      calls.push(call());
      await nextTurn();
    }
    return calls;
  }

  async function keyUseRecorded() {
    while (!(await db.prisma.agentKey.findFirst({ where: { keyHash: sha256(AGENT_KEY), lastUsedAt: { not: null } } }))) await nextTurn();
  }

  it("agent keys: calls that miss the remembered key while it is read again share that one read", async () => {
    await agentCaller(app.deps).session.open({ title: "key remembered" });
    await keyUseRecorded();
    app.deps.agentKeyCache.clear();
    const { reads, release } = holdReads(app.deps.prisma.agentKey, "findUnique");
    const calls = await oneAfterAnother(10, () => authenticateAgent(app.deps, AGENT_KEY));
    release();
    expect((await Promise.all(calls)).map((agent) => agent?.workspaceId)).toEqual(calls.map(() => app.workspaceId));
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it("agent keys: a call after the key changed does not join a read begun before it", async () => {
    const { agentKeyId } = (await authenticateAgent(app.deps, AGENT_KEY))!;
    await keyUseRecorded();
    app.deps.agentKeyCache.clear();
    const { reads, release } = holdReads(app.deps.prisma.agentKey, "findUnique");
    const before = await oneAfterAnother(3, () => authenticateAgent(app.deps, AGENT_KEY));
    app.deps.bus.publish("agent-key:changed", { workspaceId: app.workspaceId, agentKeyId, keyHash: sha256(AGENT_KEY), revoked: false });
    const after = await oneAfterAnother(3, () => authenticateAgent(app.deps, AGENT_KEY));
    release();
    await Promise.all([...before, ...after]);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it("operator sessions: calls that miss the remembered session share one read; after the session ended, a call reads it again", async () => {
    let token: string | undefined;
    await callerWith(app.deps, { setSessionCookie: (value) => (token = value ?? undefined) }).auth.login(ADMIN);
    const { sessionId } = (await authenticateOperator(app.deps, token!))!;
    app.deps.operatorSessionCache.clear();
    const { reads, release } = holdReads(app.deps.prisma, "$queryRaw");
    const together = await oneAfterAnother(5, () => authenticateOperator(app.deps, token!));
    app.deps.bus.publish("operator:session-ended", { workspaceId: app.workspaceId, sessionId });
    const afterEnded = await oneAfterAnother(5, () => authenticateOperator(app.deps, token!));
    release();
    expect((await Promise.all(together)).map((operator) => operator?.email)).toEqual(together.map(() => ADMIN.email));
    await Promise.all(afterEnded);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it("agent keys: a key read before its revocation answers the calls that joined the read, and is not remembered", async () => {
    const { agentKeyId } = (await authenticateAgent(app.deps, AGENT_KEY))!;
    await keyUseRecorded();
    app.deps.agentKeyCache.clear();
    const { reads, release, answered } = holdAnswers(app.deps.prisma.agentKey, "findUnique");
    const before = authenticateAgent(app.deps, AGENT_KEY);
    await answered;
    await db.prisma.agentKey.update({ where: { id: agentKeyId }, data: { revokedAt: new Date() } });
    app.deps.bus.publish("agent-key:changed", { workspaceId: app.workspaceId, agentKeyId, keyHash: sha256(AGENT_KEY), revoked: true });
    release();
    expect((await before)?.agentKeyId).toBe(agentKeyId);
    expect(await authenticateAgent(app.deps, AGENT_KEY)).toBeNull();
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it("operator sessions: a session read before its operator changed answers the calls that joined the read, and is not remembered", async () => {
    let token: string | undefined;
    await callerWith(app.deps, { setSessionCookie: (value) => (token = value ?? undefined) }).auth.login(ADMIN);
    const { operatorId } = (await authenticateOperator(app.deps, token!))!;
    app.deps.operatorSessionCache.clear();
    const { reads, release, answered } = holdAnswers(app.deps.prisma, "$queryRaw");
    const before = authenticateOperator(app.deps, token!);
    await answered;
    await db.prisma.operator.update({ where: { id: operatorId }, data: { role: "OPERATOR" } });
    app.deps.bus.publish("operator:changed", { workspaceId: app.workspaceId, operatorId });
    release();
    expect((await before)?.role).toBe("ADMIN");
    expect((await authenticateOperator(app.deps, token!))?.role).toBe("OPERATOR");
    expect(reads).toHaveBeenCalledTimes(2);
  });
});
