// Someone with direct database access tampers with the audit log or with an
// approval; audit.verify names where. The tampering runs as the database
// owner with the append-only trigger switched off, as such an attacker could.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditHash, GENESIS_HASH } from "../server/domain/audit.ts";
import { anchorUnkeyedChains } from "../server/services/audit-unkeyed-anchor.ts";
import { createServiceDeps, type ServiceDeps } from "../server/services/deps.ts";
import { agentCaller, callerWith, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";
import { operatorClient } from "./clients.ts";
import { startTestServer } from "./server.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

let digestDir: string;
let digestFile: string;
let deps: ServiceDeps;
beforeAll(async () => {
  digestDir = await mkdtemp(path.join(tmpdir(), "tollgate-digests-"));
});
afterAll(() => rm(digestDir, { recursive: true, force: true }));
beforeEach(async () => {
  digestFile = path.join(digestDir, `${Date.now()}-${Math.random()}.jsonl`);
  // The same database and process secret as the app, with digests kept in a file.
  deps = createServiceDeps(db, app.bus, { auditDigests: { file: digestFile } });
  await deps.receipts.ready();
});

/** As the database owner: the append-only trigger and the keyed-only check off for the length of `tamper`. */
async function asOwner(tamper: () => Promise<unknown>) {
  await db.prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" DISABLE TRIGGER "audit_entry_append_only"`);
  await db.prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" DROP CONSTRAINT "AuditEntry_keyed_only"`);
  try {
    await tamper();
  } finally {
    await db.prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" ADD CONSTRAINT "AuditEntry_keyed_only" CHECK ("macVersion" = 1) NOT VALID`);
    await db.prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" ENABLE TRIGGER "audit_entry_append_only"`);
  }
}

/** Rewrites a workspace's entries from `fromSeq` on in the unkeyed format (all one can do without the key), `edit` changing their data. */
async function rewriteUnkeyed(workspaceId: string, fromSeq: number, edit: (entry: { seq: number; subjectId: string; action: string; data: unknown }) => unknown = (entry) => entry.data) {
  const entries = await db.prisma.auditEntry.findMany({ where: { workspaceId }, orderBy: { seq: "asc" } });
  await asOwner(async () => {
    let prev = entries.find((entry) => entry.seq === fromSeq - 1)?.hash ?? GENESIS_HASH;
    for (const entry of entries.filter((candidate) => candidate.seq >= fromSeq)) {
      const data = edit(entry) ?? null;
      const hash = auditHash(prev, { ...entry, data });
      await db.prisma.$executeRaw`UPDATE "AuditEntry" SET data = ${JSON.stringify(data)}::jsonb, "prevHash" = ${prev}, hash = ${hash}, "macVersion" = 0 WHERE id = ${entry.id}`;
      prev = hash;
    }
  });
}

/** Three decided approvals (approve, reject, approve) and a digest sealed after them. */
async function decidedAndSealed() {
  const agent = agentCaller(deps);
  const operator = await operatorCaller(deps);
  const { sessionId } = await agent.session.open({});
  const begun = await agent.request.begin({ sessionId, agent: "mailer" });
  const ids: string[] = [];
  for (const action of ["approve", "reject", "approve"] as const) {
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { action } });
    await operator.approval.decide({ approvalId: asked.approvalId, action, ...(action === "reject" ? { message: "no" } : {}) });
    ids.push(asked.approvalId);
  }
  const { sealed } = await operator.audit.seal();
  expect(sealed).toHaveLength(1);
  expect(await operator.audit.verify()).toMatchObject({ ok: true });
  return { operator, ids, sealedSeq: sealed[0]!.seq };
}

describe("audit log tampering", () => {
  it("audit: the log is append-only in the database: UPDATE and DELETE are refused", async () => {
    await decidedAndSealed();
    await expect(db.prisma.$executeRawUnsafe(`UPDATE "AuditEntry" SET "actorLabel" = 'someone else'`)).rejects.toThrow(/append-only/);
    await expect(db.prisma.$executeRawUnsafe(`DELETE FROM "AuditEntry"`)).rejects.toThrow(/append-only/);
  });

  it("audit: a seal writes a signed digest of the chain head to the file, and only when the head moved", async () => {
    const { operator, sealedSeq } = await decidedAndSealed();
    const lines = (await readFile(digestFile, "utf8")).trim().split("\n").map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ workspaceId: app.workspaceId, seq: sealedSeq, jws: expect.stringMatching(/^ey/) })]);
    expect((await operator.audit.seal()).sealed).toEqual([]);
  });

  it("audit: deleting the newest entries is detected against the last digest", async () => {
    const { operator, sealedSeq } = await decidedAndSealed();
    await asOwner(() => db.prisma.$executeRaw`DELETE FROM "AuditEntry" WHERE seq > ${sealedSeq - 2}`);
    expect(await operator.audit.verify()).toMatchObject({ ok: false, brokenAtSeq: sealedSeq - 1, reason: expect.stringContaining(`entry ${sealedSeq} was sealed`) });
  });

  it("audit: deleting the whole log is detected against the last digest", async () => {
    const { operator } = await decidedAndSealed();
    await asOwner(() => db.prisma.$executeRaw`DELETE FROM "AuditEntry"`);
    // The operator's session still works: only the log is gone.
    const verdict = await operator.audit.verify();
    expect(verdict).toMatchObject({ ok: false, brokenAtSeq: 1, reason: expect.stringContaining("were deleted") });
  });

  it("audit: a rejection rewritten into an approval, every later link recomputed without the key, is detected at that entry", async () => {
    const { operator, ids } = await decidedAndSealed();
    const entries = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "asc" } });
    const rejected = entries.find((entry) => entry.subjectId === ids[1] && entry.action === "approval.decided")!;
    await asOwner(async () => {
      // Recompute the plain SHA-256 links (all an attacker without the key can do), from the rewritten entry on.
      let prev = entries.find((entry) => entry.seq === rejected.seq - 1)?.hash ?? GENESIS_HASH;
      for (const entry of entries.filter((candidate) => candidate.seq >= rejected.seq)) {
        const data = entry.seq === rejected.seq ? { ...(entry.data as object), status: "APPROVED", action: "approve", message: null } : entry.data;
        const hash = auditHash(prev, { ...entry, data });
        await db.prisma.$executeRaw`UPDATE "AuditEntry" SET data = ${JSON.stringify(data)}::jsonb, "prevHash" = ${prev}, hash = ${hash}, "macVersion" = 0 WHERE id = ${entry.id}`;
        prev = hash;
      }
      await db.prisma.$executeRaw`UPDATE "Approval" SET status = 'APPROVED', "decisionAction" = 'approve' WHERE id = ${ids[1]!}`;
    });
    expect(await operator.audit.verify()).toMatchObject({ ok: false, brokenAtSeq: rejected.seq });
  });

  it("audit: the whole chain rewritten from its start in the unkeyed format, a rejection turned into an approval and its row flipped, is refused without any digest", async () => {
    const { ids } = await decidedAndSealed();
    const noDigest = await operatorCaller(app.deps);
    await rewriteUnkeyed(app.workspaceId, 1, (entry) =>
      entry.subjectId === ids[1] && entry.action === "approval.decided" ? { ...(entry.data as object), status: "APPROVED", action: "approve", message: null } : entry.data,
    );
    await asOwner(() => db.prisma.$executeRaw`UPDATE "Approval" SET status = 'APPROVED', "decisionAction" = 'approve', "decisionMessage" = NULL WHERE id = ${ids[1]!}`);
    expect(await noDigest.audit.verify()).toMatchObject({ ok: false, brokenAtSeq: 1, reason: expect.stringMatching(/unkeyed format of before and no keyed anchor/) });
    // The agent reads the flipped row; the log says it cannot be trusted.
    expect((await agentCaller(app.deps).approval.await({ approvalId: ids[1]!, timeoutMs: 0 })).status).toBe("APPROVED");
  });

  it("audit: unkeyed entries are refused by the database itself", async () => {
    await decidedAndSealed();
    const [last] = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" }, take: 1 });
    await expect(
      db.prisma.$executeRaw`INSERT INTO "AuditEntry" ("workspaceId", seq, "actorType", "actorId", "actorLabel", action, "subjectType", "subjectId", "prevHash", hash, "macVersion")
        VALUES (${app.workspaceId}, ${last!.seq + 1}, 'system', 's', 's', 'x', 'x', 'x', ${last!.hash}, 'h', 0)`,
    ).rejects.toThrow(/AuditEntry_keyed_only/);
  });

  it("audit: a chain of before keyed MACs is anchored once by the upgrade and then verifies; rewritten after, it is refused", async () => {
    // A workspace whose log an older server wrote: unkeyed links only.
    const legacy = "ws_legacy";
    await db.prisma.workspace.create({ data: { id: legacy, name: "legacy" } });
    await asOwner(async () => {
      let prev = GENESIS_HASH;
      for (let seq = 1; seq <= 3; seq++) {
        const content = { workspaceId: legacy, seq, actorType: "operator", actorId: "op_1", actorLabel: "ops@example.com", action: "approval.decided", subjectType: "approval", subjectId: `apr_${seq}`, data: { status: "REJECTED" }, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)) };
        const hash = auditHash(prev, content);
        await db.prisma.auditEntry.create({ data: { ...content, prevHash: prev, hash, macVersion: 0 } });
        prev = hash;
      }
    });
    expect(await deps.audit.verify(db.prisma, legacy)).toMatchObject({ ok: false, brokenAtSeq: 1 });

    expect(await anchorUnkeyedChains(app.deps)).toEqual([legacy]);
    expect(await deps.audit.verify(db.prisma, legacy)).toEqual({ ok: true, checked: 4 });
    const anchor = await db.prisma.auditEntry.findFirstOrThrow({ where: { workspaceId: legacy, seq: 4 } });
    expect(anchor).toMatchObject({ action: "audit.unkeyed_anchored", macVersion: 1, data: { throughSeq: 3 } });
    // Run again, it finds nothing to do; chains without unkeyed entries are never touched.
    expect(await anchorUnkeyedChains(app.deps)).toEqual([]);

    await rewriteUnkeyed(legacy, 2, (entry) => (entry.seq === 2 ? { status: "APPROVED" } : entry.data));
    expect(await deps.audit.verify(db.prisma, legacy)).toMatchObject({ ok: false });
  });

  it("audit: an Approval row edited from REJECTED to APPROVED is named, though the log itself is intact", async () => {
    const { operator, ids } = await decidedAndSealed();
    await db.prisma.$executeRaw`UPDATE "Approval" SET status = 'APPROVED', "decisionAction" = 'approve', "decisionMessage" = NULL WHERE id = ${ids[1]!}`;
    expect(await operator.audit.verify()).toMatchObject({
      ok: false,
      reason: expect.stringContaining(`approval ${ids[1]} is APPROVED (approve) in its row, but audit entry`),
    });
  });

  it("audit: a missing digest file is reported as missing, never read as no digests", async () => {
    const { operator } = await decidedAndSealed();
    await rm(digestFile);
    expect(await operator.audit.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/digest file .* is missing, though this server has sealed to it/) });
    // Another process (it wrote nothing to the file) knows by the entries' times, which their MACs vouch for.
    const later = createServiceDeps(db, app.bus, { auditDigests: { file: digestFile, sealEveryMs: 300_000 } });
    later.now = () => new Date(Date.now() + 7 * 60_000);
    expect(await (await operatorCaller(later)).audit.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/is missing, though entries up to \d+ are older than the seal interval/) });
  });

  it("audit: a shortened digest file is reported as shortened; a line taken from its middle breaks the file's own chain", async () => {
    const { operator, ids } = await decidedAndSealed();
    await operator.policy.create({ name: "later", match: { tool: "later_*" }, outcome: "require" });
    expect((await operator.audit.seal()).sealed).toHaveLength(1);
    const lines = (await readFile(digestFile, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(2);
    expect((await stat(digestFile)).mode & 0o777).toBe(0o600);

    await writeFile(digestFile, `${lines[0]}\n`);
    expect(await operator.audit.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/holds 1 lines, but this server wrote 2: it was shortened/) });
    const later = createServiceDeps(db, app.bus, { auditDigests: { file: digestFile, sealEveryMs: 300_000 } });
    later.now = () => new Date(Date.now() + 7 * 60_000);
    expect(await (await operatorCaller(later)).audit.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/older than the seal interval but no digest in .* covers them/) });

    await writeFile(digestFile, `${lines[1]}\n`);
    expect(await operator.audit.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/line 1 of .* does not follow/) });
    expect(ids).toHaveLength(3);
  });

  it("audit: a last line a killed process did not finish is left out, and cut off by the next seal", async () => {
    const { operator } = await decidedAndSealed();
    const whole = await readFile(digestFile, "utf8");
    await writeFile(digestFile, `${whole}{"workspaceId":"${app.workspaceId}","seq":9`);
    expect(await operator.audit.verify()).toMatchObject({ ok: true });
    await operator.policy.create({ name: "after the crash", match: { tool: "crash_*" }, outcome: "require" });
    expect((await operator.audit.seal()).sealed).toHaveLength(1);
    const lines = (await readFile(digestFile, "utf8")).trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => line.line)).toEqual([1, 2]);
    expect(await operator.audit.verify()).toMatchObject({ ok: true });
  });

  it("audit: the digest file stays bounded: past its limit it is compacted to each workspace's last digest, which still catches a deletion", async () => {
    deps.auditDigests.maxLines = 3;
    const { operator } = await decidedAndSealed();
    for (let i = 0; i < 3; i++) {
      await operator.policy.create({ name: `rule ${i}`, match: { tool: `tool_${i}` }, outcome: "require" });
      await operator.audit.seal();
    }
    const lines = (await readFile(digestFile, "utf8")).trim().split("\n").map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ compacted: true, line: 1, replacedLines: 4 });
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(await operator.audit.verify()).toMatchObject({ ok: true });
    const newest = lines.at(-1).seq as number;
    await asOwner(() => db.prisma.$executeRaw`DELETE FROM "AuditEntry" WHERE "workspaceId" = ${app.workspaceId} AND seq = ${newest}`);
    expect(await operator.audit.verify()).toMatchObject({ ok: false, reason: expect.stringContaining(`entry ${newest} was sealed`) });
  });

  it("audit: a server seals to a file in its data folder by default, so deleting the newest entries of any kind (a policy made, an agent key made) is reported", async () => {
    const server = await startTestServer();
    try {
      const admin = await operatorClient(server.url);
      await admin.policy.create.mutate({ name: "mail", match: { tool: "send_*" }, outcome: "require" });
      await admin.agentKey.create.mutate({ name: "second" });
      const { sealed } = await admin.audit.seal.mutate();
      expect(sealed).toHaveLength(1);
      const prisma = server.server.database.prisma;
      const newest = await prisma.auditEntry.findMany({ where: { workspaceId: server.server.bootstrap.workspaceId }, orderBy: { seq: "desc" }, take: 2 });
      expect(newest.map((entry) => entry.action).sort()).toEqual(["agent_key.created", "policy.created"]);
      await prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" DISABLE TRIGGER "audit_entry_append_only"`);
      await prisma.$executeRaw`DELETE FROM "AuditEntry" WHERE "workspaceId" = ${server.server.bootstrap.workspaceId} AND seq >= ${newest[1]!.seq}`;
      await prisma.$executeRawUnsafe(`ALTER TABLE "AuditEntry" ENABLE TRIGGER "audit_entry_append_only"`);
      expect(await admin.audit.verify.query()).toMatchObject({ ok: false, reason: expect.stringMatching(/were deleted/) });
    } finally {
      await server.close();
    }
  }, 120_000);

  it("audit: sealing is for admins", async () => {
    const viewer = callerWith(deps);
    await expect(viewer.audit.seal()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
