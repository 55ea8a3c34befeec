// Concurrent misses of one cache entry share one read. A remembered agent key
// or operator session is read again when its few seconds end, and under load
// every call in flight at that moment missed together: 100 agents sent about
// 100 identical reads at each expiry, a third of all statements of a run.
// A change that makes a read's answer wrong (a key revoked, a session ended)
// forgets the read in flight, so calls after the change's event read anew.

export class SharedReads<Key, Value> {
  readonly #inFlight = new Map<Key, Promise<Value>>();

  /** The answer of the read of `key` in flight, or of `read()` started now and shared until it settles. */
  read(key: Key, read: () => Promise<Value>): Promise<Value> {
    const inFlight = this.#inFlight.get(key);
    if (inFlight) return inFlight;
    const started = read().finally(() => {
      if (this.#inFlight.get(key) === started) this.#inFlight.delete(key);
    });
    this.#inFlight.set(key, started);
    return started;
  }

  forget(key: Key): void {
    this.#inFlight.delete(key);
  }

  clear(): void {
    this.#inFlight.clear();
  }
}
