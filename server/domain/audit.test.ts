import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { auditHash, auditMac, checkAgainstDigest, crossCheckApprovals, GENESIS_HASH, UNKEYED_ANCHOR_ACTION, verifyChain, type AuditContent } from "./audit.ts";

const KEY = randomBytes(32);

type Entry = AuditContent & { prevHash: string; hash: string; macVersion: number };

/** A chain of `count` entries; the first `legacy` of them with plain SHA-256 links, as written before keyed MACs. */
function chain(count: number, { key = KEY, legacy = 0 } = {}) {
  const entries: Entry[] = [];
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
      data: { status: "APPROVED", action: "approve", n: seq },
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
    };
    const unkeyed = seq <= legacy;
    const hash = unkeyed ? auditHash(prev, content) : auditMac(key, prev, content);
    entries.push({ ...content, prevHash: prev, hash, macVersion: unkeyed ? 0 : 1 });
    prev = hash;
  }
  return entries;
}

/** The keyed anchor the one-time upgrade appends, naming the last unkeyed entry. */
function anchored(entries: Entry[], throughSeq: number, key = KEY): Entry[] {
  const last = entries.at(-1)!;
  const content: AuditContent = {
    ...last,
    seq: last.seq + 1,
    actorType: "system",
    actorId: "system",
    actorLabel: "tollgate",
    action: UNKEYED_ANCHOR_ACTION,
    subjectType: "audit_chain",
    subjectId: "ws_1",
    data: { throughSeq },
  };
  return [...entries, { ...content, prevHash: last.hash, hash: auditMac(key, last.hash, content), macVersion: 1 }];
}

/** What someone with database access but not the key can do: rewrite and re-link every entry with plain hashes. */
function rechainedWithoutKey(entries: Entry[], from: number): Entry[] {
  let prev = entries[from - 2]?.hash ?? GENESIS_HASH;
  return entries.map((entry) => {
    if (entry.seq < from) return entry;
    const hash = auditHash(prev, entry);
    const rewritten = { ...entry, prevHash: prev, hash, macVersion: 0 };
    prev = hash;
    return rewritten;
  });
}

describe("audit chain", () => {
  it("audit: an untouched chain verifies, including entries written before keyed MACs once a keyed anchor names the last of them", () => {
    expect(verifyChain(chain(5), { key: KEY })).toEqual({ ok: true, checked: 5 });
    expect(verifyChain(anchored(chain(5, { legacy: 2 }), 2), { key: KEY })).toEqual({ ok: true, checked: 6 });
    expect(verifyChain(anchored(chain(2, { legacy: 2 }), 2), { key: KEY })).toEqual({ ok: true, checked: 3 });
  });

  it("audit: unkeyed entries without a keyed anchor naming the last of them are refused, whatever follows", () => {
    const reason = expect.stringMatching(/entries 1–2 are in the unkeyed format of before and no keyed anchor/);
    expect(verifyChain(chain(5, { legacy: 2 }), { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 1, reason });
    expect(verifyChain(anchored(chain(5, { legacy: 2 }), 1), { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 1, reason });
    // An anchor made without the key is no anchor.
    expect(verifyChain(anchored(chain(2, { legacy: 2 }), 2, randomBytes(32)), { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/altered/) });
  });

  it("audit: a legacy prefix rewritten under its anchor is detected at the anchor", () => {
    const entries = anchored(chain(3, { legacy: 3 }), 3);
    entries[1]!.data = { status: "APPROVED", action: "approve", n: 999 };
    const rewritten = rechainedWithoutKey(entries.slice(0, 3), 1).concat(entries.slice(3));
    expect(verifyChain(rewritten, { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 4, reason: expect.stringMatching(/does not link/) });
  });

  it("audit: editing an entry's data breaks the chain at that entry", () => {
    const entries = chain(5);
    entries[2]!.data = { status: "REJECTED", action: "reject", n: 3 };
    expect(verifyChain(entries, { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/altered/) });
  });

  it("audit: an edit re-linked without the key is detected, whether marked keyed or unkeyed", () => {
    const entries = chain(5);
    entries[2]!.data = { status: "APPROVED", action: "approve", n: 999 };
    expect(verifyChain(rechainedWithoutKey(entries, 3), { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/unkeyed hash after keyed/) });
    const relinkedAsKeyed = rechainedWithoutKey(entries, 3).map((entry) => ({ ...entry, macVersion: 1 }));
    expect(verifyChain(relinkedAsKeyed, { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/altered/) });
    // Every entry rewritten in the unkeyed format from the start: no keyed anchor vouches for it.
    const everything = rechainedWithoutKey(chain(5), 1);
    expect(verifyChain(everything, { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 1, reason: expect.stringMatching(/no keyed anchor/) });
    expect(checkAgainstDigest(everything, { workspaceId: "ws_1", seq: 5, hash: chain(5)[4]!.hash, sealedAt: "2026-01-01T00:00:05.000Z" })).toMatchObject({
      ok: false,
      brokenAtSeq: 5,
      reason: expect.stringMatching(/rewritten/),
    });
  });

  it("audit: a chain written under another key does not verify", () => {
    expect(verifyChain(chain(3, { key: randomBytes(32) }), { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 1 });
  });

  it("audit: deleting an entry is detected as a gap", () => {
    const entries = chain(5);
    entries.splice(1, 1);
    expect(verifyChain(entries, { key: KEY })).toMatchObject({ ok: false, brokenAtSeq: 2, reason: expect.stringMatching(/missing/) });
  });

  it("audit: deleting the newest entries, or all of them, is detected against the last digest", () => {
    const entries = chain(6);
    const digest = { workspaceId: "ws_1", seq: 6, hash: entries[5]!.hash, sealedAt: "2026-01-01T00:00:06.000Z" };
    expect(checkAgainstDigest(entries, digest)).toBeNull();
    expect(checkAgainstDigest(entries.slice(0, 4), digest)).toMatchObject({ ok: false, brokenAtSeq: 5, reason: expect.stringContaining("entries 5–6 were deleted") });
    expect(checkAgainstDigest([], digest)).toMatchObject({ ok: false, brokenAtSeq: 1, reason: expect.stringContaining("entries 1–6 were deleted") });
  });

  it("audit: key order inside data does not change the MAC", () => {
    const [entry] = chain(1);
    const reordered = { ...entry!, data: { n: 1, action: "approve", status: "APPROVED" } };
    expect(auditMac(KEY, GENESIS_HASH, reordered)).toBe(entry!.hash);
  });
});

describe("approvals against their audit entries", () => {
  const entries = [
    { seq: 4, action: "approval.decided", subjectId: "apr_a", data: { status: "REJECTED", action: "reject" } },
    { seq: 5, action: "approval.decided", subjectId: "apr_b", data: { status: "APPROVED", action: "edit", args: { to: "b@example.com" } } },
    { seq: 6, action: "approval.canceled", subjectId: "apr_c", data: { status: "CANCELED", action: null } },
  ];
  const rows = [
    { id: "apr_a", status: "REJECTED", decisionAction: "reject", approvedArgs: null },
    { id: "apr_b", status: "APPROVED", decisionAction: "edit", approvedArgs: { to: "b@example.com" } },
    { id: "apr_c", status: "CANCELED", decisionAction: null, approvedArgs: null },
  ];

  it("audit: approvals that agree with their entries pass", () => {
    expect(crossCheckApprovals(rows, entries)).toBeNull();
  });

  it("audit: a rejection turned into an approval in the row is named", () => {
    const edited = rows.map((row) => (row.id === "apr_a" ? { ...row, status: "APPROVED", decisionAction: "approve" } : row));
    expect(crossCheckApprovals(edited, entries)).toEqual({ approvalId: "apr_a", reason: expect.stringContaining("audit entry 4 recorded REJECTED (reject)") });
  });

  it("audit: edited arguments that differ from the recorded ones, and an ending nobody recorded, are named", () => {
    const widened = rows.map((row) => (row.id === "apr_b" ? { ...row, approvedArgs: { to: "everyone@example.com" } } : row));
    expect(crossCheckApprovals(widened, entries)).toMatchObject({ approvalId: "apr_b" });
    expect(crossCheckApprovals([...rows, { id: "apr_d", status: "APPROVED", decisionAction: "approve", approvedArgs: null }], entries)).toMatchObject({
      approvalId: "apr_d",
      reason: expect.stringContaining("no audit entry"),
    });
  });
});
