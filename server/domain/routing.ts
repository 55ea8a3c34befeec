// Who is asked to decide an approval, who is asked next when nobody does, and
// when the approval is announced once more before it expires.
import type { OperatorRoleName } from "./principal.ts";
import { hasRole } from "./policy.ts";

/** Who an approval asks: named operators (by email) and a group's members; with neither, everyone of at least the role. */
export interface Audience {
  role?: "OPERATOR" | "ADMIN";
  operators?: string[];
  group?: string;
}

/** After `afterSeconds` undecided (counted from the request), ask `to`, on `channels` (names; none: every enabled channel). */
export interface EscalationStep {
  afterSeconds: number;
  to: Audience;
  channels?: string[];
}

/** A rule's (or the workspace default's) routing. */
export interface Route {
  to?: Audience;
  /** Channel names the approval is announced on; absent: every enabled channel of the workspace. */
  channels?: string[];
  escalate?: EscalationStep[];
  /** Announce the approval once more this long before it expires. */
  remindBeforeExpirySeconds?: number;
}

/** Who an approval asks now, as stored on it. */
export interface Ask {
  role: "OPERATOR" | "ADMIN";
  operators: string[];
  group: string | null;
}

export function askOf(audience: Audience | undefined, gateRole: "OPERATOR" | "ADMIN"): Ask {
  return {
    role: audience?.role ?? gateRole,
    operators: [...new Set((audience?.operators ?? []).map((email) => email.toLowerCase()))],
    group: audience?.group ?? null,
  };
}

/** When escalation step `level` (0-based) falls due for an approval made at `createdAt`; null when there is none. */
export function escalationDueAt(route: Route | null, createdAt: Date, level: number): Date | null {
  const step = route?.escalate?.[level];
  return step ? new Date(createdAt.getTime() + step.afterSeconds * 1000) : null;
}

/** When an approval expiring at `expiresAt` is announced once more; null when the route asks for no reminder or it would come before the request. */
export function reminderDueAt(route: Route | null, createdAt: Date, expiresAt: Date | null): Date | null {
  const before = route?.remindBeforeExpirySeconds;
  if (!before || !expiresAt) return null;
  const at = new Date(expiresAt.getTime() - before * 1000);
  return at > createdAt ? at : null;
}

export interface OperatorContact {
  email: string;
  role: OperatorRoleName;
  groups: string[];
  disabled: boolean;
}

/**
 * The operators an ask reaches: those named and the group's members when the
 * ask names any; otherwise everyone of at least its role. Never a disabled
 * operator, never a viewer (who cannot decide).
 */
export function recipientsOf(ask: Ask, operators: OperatorContact[]): string[] {
  const active = operators.filter((operator) => !operator.disabled && operator.role !== "VIEWER");
  const named = ask.operators.length > 0 || ask.group !== null;
  const chosen = named
    ? active.filter((operator) => ask.operators.includes(operator.email.toLowerCase()) || (ask.group !== null && operator.groups.includes(ask.group)))
    : active.filter((operator) => hasRole(operator.role, ask.role));
  return [...new Set(chosen.map((operator) => operator.email))].sort();
}

/** Whether an approval's ask names this operator (by email or group): their inbox shows it first. */
export function isAskedOf(ask: Ask, operator: { email: string; groups: string[] }): boolean {
  return ask.operators.includes(operator.email.toLowerCase()) || (ask.group !== null && operator.groups.includes(ask.group));
}

/** Checks what the schema cannot: steps in increasing order, each after the previous, and channels named. Returns the problem, naming the field, or null. */
export function routeProblem(route: Route, knownChannels?: ReadonlySet<string>): string | null {
  let previous = 0;
  for (const [index, step] of (route.escalate ?? []).entries()) {
    if (step.afterSeconds <= previous) {
      return `route.escalate[${index}].afterSeconds: each step comes after the previous one (${step.afterSeconds} s is not after ${previous} s)`;
    }
    previous = step.afterSeconds;
  }
  if (knownChannels) {
    const named = [...(route.channels ?? []).map((name) => ["route.channels", name] as const), ...(route.escalate ?? []).flatMap((step, index) => (step.channels ?? []).map((name) => [`route.escalate[${index}].channels`, name] as const))];
    for (const [field, name] of named) {
      if (!knownChannels.has(name)) return `${field}: there is no notification channel named "${name}" in this workspace`;
    }
  }
  return null;
}
