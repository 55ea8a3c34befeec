// MCP's tool annotation hints, which a rule can match and the console names,
// apart from the pins' hashing (tool-pins.ts, with Node's crypto), so the
// console's rule list loads without it.

export const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
export type Hint = (typeof HINTS)[number];
export type HintMatch = Partial<Record<Hint, boolean>>;
