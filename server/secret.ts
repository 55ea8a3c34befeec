// The server's own secret, from which it derives the keys that protect data at
// rest (the encrypted receipt signing keys, the audit MAC). It never enters the database.
import { hkdfSync, randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { log } from "./log.ts";

export const SECRET_FILE = "secret.key";
export const MIN_SECRET_LENGTH = 32;

export interface SecretSource {
  /** TOLLGATE_SECRET, when set. */
  configured?: string;
  /** TOLLGATE_DATA_DIR: where `secret.key` is kept when TOLLGATE_SECRET is unset. */
  dataDir: string;
}

let explainedFileSecret = false;

/** A new random secret: 32 bytes, base64url (43 characters). */
export function generateSecret(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * TOLLGATE_SECRET if set; otherwise the secret kept in `<dataDir>/secret.key`,
 * generated (mode 0600) on the first start. An in-memory data folder gets an
 * in-memory secret, as nothing else of it outlives the process either.
 */
export async function resolveServerSecret(source: SecretSource): Promise<string> {
  if (source.configured) return source.configured;
  if (source.dataDir.startsWith("memory://")) return generateSecret();

  const file = path.join(source.dataDir, SECRET_FILE);
  await mkdir(source.dataDir, { recursive: true });
  let secret = await readSecretFile(file);
  let generated = false;
  if (secret === undefined) {
    // Written whole under a temporary name, then linked into place: of two
    // processes starting on one folder, one links and both read a complete file.
    const draft = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(draft, `${generateSecret()}\n`, { mode: 0o600, flag: "wx" });
    try {
      await link(draft, file);
      generated = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      await unlink(draft);
    }
    secret = await readSecretFile(file);
  }
  if (secret === undefined || secret.length < MIN_SECRET_LENGTH) {
    throw new Error(
      `${file} does not hold a usable secret (at least ${MIN_SECRET_LENGTH} characters): restore it from a backup, ` +
        "or set TOLLGATE_SECRET to the secret this server ran with; a new secret cannot read the signing keys stored under the old one",
    );
  }
  if (!explainedFileSecret) {
    explainedFileSecret = true;
    log.info(
      `TOLLGATE_SECRET is not set: using the secret ${generated ? "generated now in" : "kept in"} ${file}; ` +
        "a deployment of several nodes must set the same TOLLGATE_SECRET on every node",
    );
  }
  return secret;
}

async function readSecretFile(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** A key for one purpose, derived from the server secret (HKDF-SHA256); purposes never share a key. */
export function deriveKey(secret: string, purpose: string, bytes = 32): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "tollgate", purpose, bytes));
}
