// Seals each workspace's audit chain head as a signed digest kept outside the
// database (a file of JSON lines under the data folder by default, and/or a
// POST to a collector), so that deleting the newest entries, the whole log, or
// rewriting all of it with the key is detected against the last digest. The
// file is a chain of its own (each line names its number and the SHA-256 of the
// line before), kept bounded by compaction; a missing or shortened file is
// reported as such, never read as "no digests".
import { createHash } from "node:crypto";
import { appendFile, open, readFile, rename, truncate } from "node:fs/promises";
import { hostname } from "node:os";
import { Prisma } from "../db/generated/client.ts";
import { GENESIS_HASH, type AuditDigest } from "../domain/audit.ts";
import { log } from "../log.ts";
import type { ServiceDeps } from "./deps.ts";

/** Where digests go: a file (JSON lines, appended) and/or a URL (POSTed, through the outbound guard). */
export interface DigestSink {
  file?: string;
  url?: string;
  /** How often the server seals (TOLLGATE_AUDIT_SEAL_SECONDS): an entry older than this (and a minute) must be covered. */
  sealEveryMs?: number;
  /** Lines beyond which the file is compacted to each workspace's last digest. */
  maxLines?: number;
  /** Lines this process knows the file to hold, so a file shortened under it is caught at once. */
  linesWritten?: number;
}

export interface SealedDigest extends AuditDigest {
  /** The node that sealed it (its host name): each node keeps its own file. */
  node: string;
  /** The line's number in the file, from 1. */
  line: number;
  /** SHA-256 of the line before (zeros for the file's first). */
  prev: string;
  /** The digest signed with the audit digest key (compact JWS), checkable with /.well-known/jwks.json. */
  jws: string;
}

/** The first line of a compacted file: it names the last line of the file it replaced. */
interface CompactionLine {
  compacted: true;
  line: 1;
  prev: string;
  /** How many lines the replaced file held. */
  replacedLines: number;
  at: string;
}

export type DigestFile =
  | { status: "missing" }
  /** `tornBytes`: a last line cut short by a crash mid-write (no newline), left out; the next seal cuts it off. */
  | { status: "ok"; digests: SealedDigest[]; lines: number; lastLine: string | null; wholeBytes: number; tornBytes: number }
  | { status: "broken"; reason: string };

const DEFAULT_MAX_LINES = 10_000;
/** After the seal interval, how long an entry may wait for its digest (the seal itself, a slow node). */
const SEAL_GRACE_MS = 60_000;
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The file's digests, its own chain checked; "missing" when there is no file. */
export async function readDigestFile(file: string): Promise<DigestFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { status: "missing" };
    throw error;
  }
  // A write the process died in leaves a last line without its newline: not a line of the file yet.
  const whole = text.slice(0, text.lastIndexOf("\n") + 1);
  const lines = whole.split("\n").filter((line) => line.trim());
  const digests: SealedDigest[] = [];
  let prev = GENESIS_HASH;
  for (const [index, raw] of lines.entries()) {
    let parsed: (SealedDigest | CompactionLine) & { line?: unknown; prev?: unknown };
    try {
      parsed = JSON.parse(raw);
    } catch {
      return { status: "broken", reason: `line ${index + 1} of ${file} is not JSON: the file was damaged` };
    }
    const compactionStart = index === 0 && "compacted" in parsed;
    if (parsed.line !== index + 1 || (!compactionStart && parsed.prev !== prev)) {
      return { status: "broken", reason: `line ${index + 1} of ${file} does not follow line ${index}: lines were removed or edited` };
    }
    if (!("compacted" in parsed)) digests.push(parsed);
    prev = sha256(raw);
  }
  const wholeBytes = Buffer.byteLength(whole, "utf8");
  return { status: "ok", digests, lines: lines.length, lastLine: lines.at(-1) ?? null, wholeBytes, tornBytes: Buffer.byteLength(text, "utf8") - wholeBytes };
}

/**
 * What the digest file says of a workspace's chain: its last digest, or why
 * the file cannot be trusted. `entries` are the chain's verified entries, whose
 * times the MACs vouch for: one older than a seal interval must be covered.
 */
export async function digestCheck(
  sink: DigestSink,
  workspaceId: string,
  entries: { seq: number; createdAt: Date }[],
  now: Date,
): Promise<{ digest: SealedDigest | null } | { seq: number; reason: string }> {
  if (!sink.file) return { digest: null };
  const file = await readDigestFile(sink.file);
  const due = new Date(now.getTime() - (sink.sealEveryMs ?? 300_000) - SEAL_GRACE_MS);
  const sealable = entries.filter((entry) => entry.createdAt <= due).at(-1);
  if (file.status === "broken") return { seq: 1, reason: file.reason };
  if (file.status === "missing") {
    if ((sink.linesWritten ?? 0) > 0 || sealable) {
      return { seq: 1, reason: `the digest file ${sink.file} is missing, though ${sealable ? `entries up to ${sealable.seq} are older than the seal interval` : "this server has sealed to it"}: it was deleted or moved` };
    }
    return { digest: null };
  }
  if (sink.linesWritten !== undefined && file.lines < sink.linesWritten) {
    return { seq: 1, reason: `the digest file ${sink.file} holds ${file.lines} lines, but this server wrote ${sink.linesWritten}: it was shortened` };
  }
  const digest = file.digests.filter((candidate) => candidate.workspaceId === workspaceId).at(-1) ?? null;
  if (sealable && (!digest || digest.seq < sealable.seq)) {
    const from = (digest?.seq ?? 0) + 1;
    return {
      seq: from,
      reason: `entries ${from}–${sealable.seq} are older than the seal interval but no digest in ${sink.file} covers them: the file was shortened, or sealing is failing (see the server's log)`,
    };
  }
  return { digest };
}

/**
 * Seals the head of every workspace's chain that moved since its last digest.
 * Returns the digests written. A sink that fails is logged and tried again at
 * the next seal; the chain itself is never changed by sealing.
 */
export function sealAuditLogs(deps: ServiceDeps, sink: DigestSink, workspaceId?: string): Promise<SealedDigest[]> {
  // One seal at a time per sink (the sealer's rounds, audit.seal): each numbers the file's next lines.
  const turn = (sealing.get(sink) ?? Promise.resolve()).then(() => sealNow(deps, sink, workspaceId));
  sealing.set(sink, turn.catch(() => undefined));
  return turn;
}

const sealing = new WeakMap<DigestSink, Promise<unknown>>();

async function sealNow(deps: ServiceDeps, sink: DigestSink, workspaceId?: string): Promise<SealedDigest[]> {
  if (!sink.file && !sink.url) return [];
  const heads = await deps.prisma.$queryRaw<{ workspaceId: string; seq: number; hash: string }[]>`
    SELECT DISTINCT ON ("workspaceId") "workspaceId", seq, hash FROM "AuditEntry"
    ${workspaceId ? Prisma.sql`WHERE "workspaceId" = ${workspaceId}` : Prisma.empty}
    ORDER BY "workspaceId", seq DESC`;
  let file = sink.file ? await readDigestFile(sink.file) : undefined;
  if (file?.status === "broken") {
    // Appending would hide the damage under new lines: start a new file beside it, keeping the damaged one.
    const kept = `${sink.file}.damaged-${Date.now()}`;
    await rename(sink.file!, kept);
    log.error(`${file.reason}; kept it as ${kept} and started a new digest file`);
    file = { status: "missing" };
  }
  if (file?.status === "ok" && file.tornBytes > 0) {
    await truncate(sink.file!, file.wholeBytes);
    log.warn(`cut off the last ${file.tornBytes} bytes of ${sink.file}: a line a stopped process had not finished writing`);
  }
  const before = file?.status === "ok" ? file : { digests: [] as SealedDigest[], lines: 0, lastLine: null as string | null };
  let line = before.lines;
  let prev = before.lastLine === null ? GENESIS_HASH : sha256(before.lastLine);
  const sealed: SealedDigest[] = [];
  for (const head of heads) {
    const previous = before.digests.filter((digest) => digest.workspaceId === head.workspaceId).at(-1);
    if (previous && previous.seq === head.seq && previous.hash === head.hash) continue;
    const digest: AuditDigest = { workspaceId: head.workspaceId, seq: head.seq, hash: head.hash, sealedAt: deps.now().toISOString() };
    line += 1;
    const sealedLine = await signedLine(deps, digest, line, prev);
    const text = JSON.stringify(sealedLine);
    prev = sha256(text);
    if (sink.file) await appendFile(sink.file, `${text}\n`, { mode: 0o600 });
    if (sink.url) {
      const sent = await deps.outbound.post(sink.url, { headers: { "content-type": "application/json" }, body: text });
      if (!sent.ok) log.warn(`audit digest for ${head.workspaceId} at entry ${head.seq} was not accepted by ${sink.url}: ${sent.error}`);
    }
    sealed.push(sealedLine);
  }
  if (sink.file) {
    sink.linesWritten = line;
    if (line > (sink.maxLines ?? DEFAULT_MAX_LINES)) await compact(deps, sink as DigestSink & { file: string });
  }
  return sealed;
}

async function signedLine(deps: ServiceDeps, digest: AuditDigest, line: number, prev: string): Promise<SealedDigest> {
  const node = hostname();
  const jws = await deps.receipts.signDigest({ ws: digest.workspaceId, seq: digest.seq, head: digest.hash, sealed_at: digest.sealedAt, node, line, prev });
  return { ...digest, node, line, prev, jws };
}

/**
 * Replaces the file by one holding each workspace's last digest, after a
 * first line that names the replaced file's last line: what a check needs,
 * bounded by the number of workspaces. Written whole, then renamed into place.
 */
async function compact(deps: ServiceDeps, sink: DigestSink & { file: string }): Promise<void> {
  const current = await readDigestFile(sink.file);
  if (current.status !== "ok") return;
  const last = new Map<string, SealedDigest>();
  for (const digest of current.digests) last.set(digest.workspaceId, digest);
  const first: CompactionLine = { compacted: true, line: 1, prev: sha256(current.lastLine ?? ""), replacedLines: current.lines, at: deps.now().toISOString() };
  const lines = [JSON.stringify(first)];
  for (const digest of last.values()) {
    const sealedLine = await signedLine(deps, { workspaceId: digest.workspaceId, seq: digest.seq, hash: digest.hash, sealedAt: digest.sealedAt }, lines.length + 1, sha256(lines.at(-1)!));
    lines.push(JSON.stringify(sealedLine));
  }
  const draft = `${sink.file}.compacting`;
  const handle = await open(draft, "w", 0o600);
  try {
    await handle.writeFile(`${lines.join("\n")}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(draft, sink.file);
  sink.linesWritten = lines.length;
}
