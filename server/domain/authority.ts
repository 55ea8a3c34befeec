// Whether an agent key may act on a request, task or approval of its workspace.
// The database supplies whether the key began it or began something above it
// (server/services/authority.ts); this file adds the trust an admin gave the key.
import picomatch from "picomatch";
import { DomainError } from "./errors.ts";
import type { AgentPrincipal } from "./principal.ts";

/**
 * The rule, written down once. An agent key may act on:
 * - a request it began, or one below a request it began in the call chain
 *   (parentRequestId: the key of an orchestrator acts on the work it invoked);
 * - a task it created, or one below a task it created in the task tree (the
 *   task tree follows the call chain that created its tasks); this is also
 *   what a follow-on `request.begin` with `taskId` needs: the caller chooses
 *   the new request's parentRequestId, so that chain proves nothing;
 * - an approval, when it may act on the approval's request;
 * - any of these when the task's agent matches one of its `trustedAgents` globs.
 * Anything else of the workspace is answered as if it did not exist.
 * Rows from before ownership was recorded (agentKeyId null) belong to no key:
 * only trust (or a key above them) reaches them, so a forgotten row cannot be
 * taken over by whichever key asks first.
 */
export interface AuthorityFacts {
  /** The caller's key began (created) it, or began (created) something above it. */
  keyAtOrAbove: boolean;
  /** The agent of the task it belongs to. */
  agent: string;
}

export function mayActOn(caller: Pick<AgentPrincipal, "trustedAgents">, target: AuthorityFacts): boolean {
  return target.keyAtOrAbove || isTrustedFor(caller.trustedAgents, target.agent);
}

export const TRUST_LIMITS = { globs: 50, globChars: 200 } as const;

// As policy rules match agent names: `*` also crosses `/` (agent names are not paths).
const GLOB_OPTIONS = { bash: true, dot: true } as const;

// A principal is cached with its trust list, so each list is compiled once.
const compiled = new WeakMap<readonly string[], (agent: string) => boolean>();

/** Whether an agent name matches one of the globs an admin trusted a key for. */
export function isTrustedFor(trustedAgents: readonly string[], agent: string): boolean {
  if (trustedAgents.length === 0) return false;
  let matcher = compiled.get(trustedAgents);
  if (!matcher) {
    matcher = picomatch([...trustedAgents], GLOB_OPTIONS);
    compiled.set(trustedAgents, matcher);
  }
  return matcher(agent);
}
