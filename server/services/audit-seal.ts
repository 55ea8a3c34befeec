// Seals each workspace's audit chain head as a signed digest kept outside the
// database (an append-only file of JSON lines, and/or a POST to a collector),
// so that deleting the newest entries, the whole log, or rewriting all of it
// with the key is detected against the last digest.
import { appendFile, readFile } from "node:fs/promises";
import { Prisma } from "../db/generated/client.ts";
import type { AuditDigest } from "../domain/audit.ts";
import { log } from "../log.ts";
import type { ServiceDeps } from "./deps.ts";

/** Where digests go: a file (JSON lines, appended) and/or a URL (POSTed, through the outbound guard). */
export interface DigestSink {
  file?: string;
  url?: string;
}

export interface SealedDigest extends AuditDigest {
  /** The digest signed with the receipt key (compact JWS), checkable with /.well-known/jwks.json. */
  jws: string;
}

/** The digest lines in the file, oldest first; none when there is no file yet. */
export async function readDigests(file: string): Promise<SealedDigest[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as SealedDigest);
}

/** The newest digest of a workspace in the sink's file, or null. */
export async function lastDigest(sink: DigestSink, workspaceId: string): Promise<SealedDigest | null> {
  if (!sink.file) return null;
  const digests = await readDigests(sink.file);
  return digests.filter((digest) => digest.workspaceId === workspaceId).at(-1) ?? null;
}

/**
 * Seals the head of every workspace's chain that moved since its last digest.
 * Returns the digests written. A sink that fails is logged and tried again at
 * the next seal; the chain itself is never changed by sealing.
 */
export async function sealAuditLogs(deps: ServiceDeps, sink: DigestSink, workspaceId?: string): Promise<SealedDigest[]> {
  if (!sink.file && !sink.url) return [];
  const heads = await deps.prisma.$queryRaw<{ workspaceId: string; seq: number; hash: string }[]>`
    SELECT DISTINCT ON ("workspaceId") "workspaceId", seq, hash FROM "AuditEntry"
    ${workspaceId ? Prisma.sql`WHERE "workspaceId" = ${workspaceId}` : Prisma.empty}
    ORDER BY "workspaceId", seq DESC`;
  const sealedBefore = sink.file ? await readDigests(sink.file) : [];
  const sealed: SealedDigest[] = [];
  for (const head of heads) {
    const previous = sealedBefore.filter((digest) => digest.workspaceId === head.workspaceId).at(-1);
    if (previous && previous.seq === head.seq && previous.hash === head.hash) continue;
    const digest: AuditDigest = { workspaceId: head.workspaceId, seq: head.seq, hash: head.hash, sealedAt: deps.now().toISOString() };
    const jws = await deps.receipts.signDigest({ ws: digest.workspaceId, seq: digest.seq, head: digest.hash, sealed_at: digest.sealedAt });
    const line = { ...digest, jws };
    if (sink.file) await appendFile(sink.file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    if (sink.url) {
      const sent = await deps.outbound.post(sink.url, { headers: { "content-type": "application/json" }, body: JSON.stringify(line) });
      if (!sent.ok) log.warn(`audit digest for ${head.workspaceId} at entry ${head.seq} was not accepted by ${sink.url}: ${sent.error}`);
    }
    sealed.push(line);
  }
  return sealed;
}
