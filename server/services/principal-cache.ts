// Verified agent keys and operator sessions, remembered for five seconds so
// that the check of an agent's or a console call costs no statement.
// Calls that miss an entry together share one read (lru-cache's fetch): under
// load every call in flight when an entry ended missed together, and 100 agents
// sent about 100 identical reads at each expiry, a third of a run's statements.
// A change that makes an answer wrong (a key revoked, a session ended, an
// operator changed) deletes the entry on every node through the event bus.
// Deleting also forgets a read in flight: calls after the change read anew, and
// the read begun before it answers the calls that joined it but is not kept.
import { LRUCache } from "lru-cache";

export const PRINCIPAL_CACHE_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** A read's answer: the principal, or null for a key or session that is unknown, revoked or ended (remembered too). */
export interface Verified<Principal> {
  principal: Principal | null;
}

export type PrincipalCache<Principal> = LRUCache<string, Verified<Principal>>;

export function newPrincipalCache<Principal>(options: {
  /** Reads the principal of a key's or token's hash from the database. */
  read: (hash: string) => Promise<Verified<Principal>>;
  /** The services' clock (tests move it), read at every look-up. */
  now: () => Date;
  /** False: no answer is kept, to measure what the cache saves (TOLLGATE_CACHES_OFF); reads in flight are still shared. */
  kept: boolean;
}): PrincipalCache<Principal> {
  return new LRUCache<string, Verified<Principal>>({
    max: MAX_ENTRIES,
    ttl: PRINCIPAL_CACHE_MS,
    perf: { now: () => options.now().getTime() },
    ttlResolution: 0,
    fetchMethod: (hash) => options.read(hash),
    // A read whose entry was deleted meanwhile still answers the calls that
    // joined it (they began before the change), and lru-cache does not keep it.
    ignoreFetchAbort: true,
    // Turned off: every answer is larger than the largest entry kept, while a
    // read in flight (size 1) is kept until it settles.
    ...(options.kept ? {} : { maxEntrySize: 1, sizeCalculation: () => 2 }),
  });
}
