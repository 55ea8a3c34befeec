// Size limits on caller-supplied JSON, and canonical JSON for hashing.

export const LIMITS = {
  argsBytes: 256 * 1024,
  inputBytes: 256 * 1024,
  traceDataBytes: 64 * 1024,
  traceEventsPerCall: 1000,
  stateBytes: 2 * 1024 * 1024,
  metadataBytes: 16 * 1024,
  configBytes: 64 * 1024,
  messageChars: 10_000,
  /** Markdown an agent writes for the operator about one call. */
  summaryChars: 20_000,
  /** A framework's serialised run state can hold its whole conversation. */
  resumeTokenChars: 256 * 1024,
  externalIdChars: 200,
  /** A form's schema: 50 fields with their titles, descriptions and choices. */
  formBytes: 64 * 1024,
  nameChars: 200,
} as const;

export function jsonSize(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), "utf8");
}

/** JSON with object keys sorted, so equal values always serialise alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, val: unknown) => {
    if (val && typeof val === "object" && !Array.isArray(val)) {
      return Object.fromEntries(
        Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return val;
  });
}
