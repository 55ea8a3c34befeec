// Every console call starts by checking its operator's session, and a decision
// is the round trip's second half: a verified session is remembered briefly,
// as agent keys are, so that the check costs no statement. What would make a
// remembered session wrong drops it from every node's cache at once, through
// the event bus: a session ended (logout, revocation, a new password, the
// operator disabled) or the operator changed (role). The cache time bounds a
// session only if such an event is lost; a session's own expiry is checked on
// every hit.
import { LRUCache } from "lru-cache";
import type { OperatorPrincipal } from "../domain/principal.ts";

const CACHE_MS = 5_000;
const MAX_ENTRIES = 10_000;

export class OperatorSessionCache {
  readonly #entries = new LRUCache<string, { principal: OperatorPrincipal; until: number }>({ max: MAX_ENTRIES });
  // Raised by every forget: a session read from the database before a change
  // committed, and answered after its event arrived, is not remembered.
  #generation = 0;

  get(tokenHash: string, now: Date): OperatorPrincipal | undefined {
    const entry = this.#entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.until > now.getTime() && entry.principal.expiresAt > now) return entry.principal;
    this.#entries.delete(tokenHash);
    return undefined;
  }

  /** Taken before reading a session from the database, and handed back to remember(). */
  generation(): number {
    return this.#generation;
  }

  remember(tokenHash: string, principal: OperatorPrincipal, readAtGeneration: number, now: Date): void {
    if (readAtGeneration !== this.#generation) return;
    this.#entries.set(tokenHash, { principal, until: now.getTime() + CACHE_MS });
  }

  forgetSession(sessionId: string): void {
    this.#forget((principal) => principal.sessionId === sessionId);
  }

  forgetOperator(operatorId: string): void {
    this.#forget((principal) => principal.operatorId === operatorId);
  }

  /** Events may have been missed (the link between nodes dropped): read every session again. */
  clear(): void {
    this.#forget(() => true);
  }

  #forget(matches: (principal: OperatorPrincipal) => boolean): void {
    this.#generation++;
    const forgotten = [...this.#entries.entries()].filter(([, entry]) => matches(entry.principal));
    for (const [tokenHash] of forgotten) this.#entries.delete(tokenHash);
  }
}
