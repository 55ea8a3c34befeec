// The words of a policy rule that the console's rule list and the API's
// schemas need without the rule compiler (policy.ts, with its RE2 engine):
// the condition operators and the priority of rules kept after every written one.

export const CONDITION_OPS = ["eq", "neq", "lt", "lte", "gt", "gte", "in", "matches", "exists"] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** Remembered rules made without a written rule to sit above go after every written rule. */
export const LAST_PRIORITY = 1_000_000_000;
