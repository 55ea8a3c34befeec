// Next.js, loaded to serve the console, replaces the process's clock and
// random sources with wrappers (node-environment-extensions: Date, Math.random,
// crypto's random functions). Each wrapper asks Next's AsyncLocalStorage
// whether a prerender with cacheComponents is under way, to flag a page that
// reads the time or a random value; the console enables no cacheComponents, so
// the answer is always no. But every `new Date()` in the process then goes
// through Reflect.construct and a store lookup: the API's hot path (the
// database drivers' timestamps, the use cases' clock) makes dozens per call,
// which cost several times a native one. So the server keeps the natives
// taken before Next loads and puts them back once it has, and again if a
// console request loads Next's runtime anew. Next's setImmediate and
// process.nextTick wrappers stay: its rendering depends on them.
import nodeCrypto from "node:crypto";

type Natives = ReturnType<typeof snapshot>;

function snapshot() {
  return {
    Date: globalThis.Date,
    random: Math.random,
    webCrypto: { getRandomValues: globalThis.crypto.getRandomValues, randomUUID: globalThis.crypto.randomUUID },
    nodeCrypto: {
      randomUUID: nodeCrypto.randomUUID,
      randomBytes: nodeCrypto.randomBytes,
      randomFillSync: nodeCrypto.randomFillSync,
      randomInt: nodeCrypto.randomInt,
      generatePrimeSync: nodeCrypto.generatePrimeSync,
      generateKeyPairSync: nodeCrypto.generateKeyPairSync,
      generateKeySync: nodeCrypto.generateKeySync,
    },
  };
}

/** Takes the natives now (before Next loads); the function returned puts back any Next replaced since, and says whether it had to. */
export function keepNativeGlobals(): () => boolean {
  const natives: Natives = snapshot();
  return () => {
    let replaced = false;
    if (globalThis.Date !== natives.Date) {
      globalThis.Date = natives.Date;
      // Next pointed the prototype's constructor at its wrapper too.
      Object.defineProperty(natives.Date.prototype, "constructor", { value: natives.Date, writable: true, configurable: true, enumerable: false });
      replaced = true;
    }
    if (Math.random !== natives.random) {
      Math.random = natives.random;
      replaced = true;
    }
    for (const [name, native] of Object.entries(natives.webCrypto) as [keyof Natives["webCrypto"], never][]) {
      if (globalThis.crypto[name] !== native) {
        (globalThis.crypto as unknown as Record<string, unknown>)[name] = native;
        replaced = true;
      }
    }
    for (const [name, native] of Object.entries(natives.nodeCrypto)) {
      const module = nodeCrypto as unknown as Record<string, unknown>;
      if (module[name] !== native) {
        module[name] = native;
        replaced = true;
      }
    }
    return replaced;
  };
}
