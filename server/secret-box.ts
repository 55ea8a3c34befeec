// Secrets the server must read back (notification URLs, their signing
// secrets) are stored sealed: AES-256-GCM under a key derived from the server
// secret, bound to the row they belong to, so a sealed value cannot be moved.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveKey } from "./secret.ts";

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** What every sealed value starts with: its format. */
export const SEALED_PREFIX = "v1.";

export class SecretBox {
  readonly #key: Buffer;

  constructor(secret: string, purpose: string) {
    this.#key = deriveKey(secret, purpose);
  }

  /** `context` (the owning row's id and field) is authenticated with the value. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url");
  }

  /** The plaintext, or undefined when it was sealed under another secret or for another context. */
  open(sealed: string, context: string): string | undefined {
    if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
    const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), "base64url");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      return undefined;
    }
  }
}
