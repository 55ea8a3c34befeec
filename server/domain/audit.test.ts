import { describe, expect, it } from "vitest";
import { auditHash, GENESIS_HASH, verifyChain, type AuditContent } from "./audit.ts";

function chain(count: number) {
  const entries: (AuditContent & { prevHash: string; hash: string })[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= count; seq++) {
    const content: AuditContent = {
      workspaceId: "ws_1",
      seq,
      actorType: "operator",
      actorId: "op_1",
      actorLabel: "ops@example.com",
      action: "approval.decided",
      subjectType: "approval",
      subjectId: `apr_${seq}`,
      data: { action: "approve", n: seq },
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
    };
    const hash = auditHash(prev, content);
    entries.push({ ...content, prevHash: prev, hash });
    prev = hash;
  }
  return entries;
}

describe("audit hash chain", () => {
  it("audit: an untouched chain verifies", () => {
    expect(verifyChain(chain(5))).toEqual({ ok: true, checked: 5 });
  });

  it("audit: editing an entry's data breaks the chain at that entry", () => {
    const entries = chain(5);
    entries[2]!.data = { action: "reject", n: 3 };
    expect(verifyChain(entries)).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/altered/) });
  });

  it("audit: deleting an entry is detected as a gap", () => {
    const entries = chain(5);
    entries.splice(1, 1);
    expect(verifyChain(entries)).toMatchObject({ ok: false, brokenAtSeq: 2, reason: expect.stringMatching(/missing/) });
  });

  it("audit: key order inside data does not change the hash", () => {
    const [entry] = chain(1);
    const reordered = { ...entry!, data: { n: 1, action: "approve" } };
    expect(auditHash(GENESIS_HASH, reordered)).toBe(entry!.hash);
  });
});
