// Slows password guessing without letting a guesser lock the right person
// out. Failed logins are counted per account and client address together
// (strict: a guesser is slowed where it guesses), per account over every
// address (softer: a guesser spread over many addresses is slowed too), and
// per address over every account (one address spraying many accounts). A
// browser that has signed into the account before carries a device cookie
// signed by the server; its attempts are counted on that device alone, so
// guesses from elsewhere, or from the same office address, cannot make the
// person wait. A few failures are free; after that every attempt opens a wait
// that doubles each time. Counters live in memory on one node, or in Redis so
// that every node of a deployment shares them.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { DomainError } from "../domain/errors.ts";

export interface ThrottleRule {
  /** Failures allowed within the window before waits begin. */
  freeFailures: number;
  /** Failures are forgotten this long after the first one. */
  windowSeconds: number;
  /** The longest wait between two attempts. */
  maxBackoffSeconds: number;
}

/** One account from one address: where a guesser is. */
export const PAIR_RULE: ThrottleRule = { freeFailures: 5, windowSeconds: 3600, maxBackoffSeconds: 900 };
/** One account from everywhere: softer, as it holds back the person too (unless their browser is known). */
export const ACCOUNT_RULE: ThrottleRule = { freeFailures: 20, windowSeconds: 3600, maxBackoffSeconds: 300 };
// Higher, because many people can share one address (an office, a VPN).
export const ADDRESS_RULE: ThrottleRule = { freeFailures: 20, windowSeconds: 3600, maxBackoffSeconds: 3600 };
/** One account from a browser that signed into it before. */
export const DEVICE_RULE: ThrottleRule = { freeFailures: 5, windowSeconds: 3600, maxBackoffSeconds: 900 };

/** A reserved attempt: counted as a failure unless the login succeeds. */
export interface LoginAttempt {
  /** Forgets the attempt; returns a device cookie value naming this browser as one that signed into the account. */
  succeeded(): Promise<{ device: string }>;
}

export interface LoginThrottle {
  /**
   * Counts one attempt (TOO_MANY_REQUESTS when it must wait): on the device
   * when `device` is a cookie this server gave a browser that signed into the
   * account, else for the account and the address.
   */
  reserve(email: string, address: string | undefined, device?: string): Promise<LoginAttempt>;
}

/** What a counter needs of a rate limiter: rate-limiter-flexible's Redis one, or the clocked memory one below. */
interface Limiter {
  /** Resolves with the points consumed in the key's window; rejects with a RateLimiterRes when over the limit. */
  consume(key: string, points: number, options?: { customDuration?: number }): Promise<{ consumedPoints: number }>;
  reward(key: string, points: number): Promise<unknown>;
  delete(key: string): Promise<unknown>;
}

type LimiterFactory = (options: { keyPrefix: string; points: number; duration: number }) => Limiter;

/**
 * rate-limiter-flexible's memory limiter, counted on the server's clock rather
 * than the process's: a window is a window of that clock, so a test can step
 * through waits without sleeping and without depending on how fast the machine is.
 * Hand-written because no well-kept limiter takes a clock: rate-limiter-flexible's
 * RateLimiterMemory (11.4) reads Date.now() and expires keys with setTimeout.
 */
class ClockedMemoryLimiter implements Limiter {
  private readonly windows = new Map<string, { consumed: number; endsAt: number }>();
  private nextSweepAt = 0;

  constructor(
    private readonly options: { points: number; duration: number },
    private readonly nowMs: () => number,
  ) {}

  private live(key: string) {
    const window = this.windows.get(key);
    if (window && window.endsAt <= this.nowMs()) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  async consume(key: string, points: number, options: { customDuration?: number } = {}) {
    let window = this.live(key);
    if (!window) {
      // A key nobody asks about again is forgotten at the next sweep, one a minute at most.
      if (this.nowMs() >= this.nextSweepAt) {
        for (const stale of [...this.windows.keys()]) this.live(stale);
        this.nextSweepAt = this.nowMs() + 60_000;
      }
      window = { consumed: 0, endsAt: this.nowMs() + (options.customDuration ?? this.options.duration) * 1000 };
      this.windows.set(key, window);
    }
    window.consumed += points;
    const result = new RateLimiterRes(
      Math.max(0, this.options.points - window.consumed),
      Math.max(0, window.endsAt - this.nowMs()),
      window.consumed,
    );
    if (window.consumed > this.options.points) throw result;
    return result;
  }

  async reward(key: string, points: number) {
    const window = this.live(key);
    if (window) window.consumed -= points;
  }

  async delete(key: string) {
    this.windows.delete(key);
  }
}

/** Waits are whole seconds: Redis expiries and Retry-After are in seconds. */
export const backoffSeconds = (rule: ThrottleRule, failuresOverFree: number) =>
  Math.min(rule.maxBackoffSeconds, 2 ** Math.min(failuresOverFree - 1, 30));

class Throttled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("throttled");
  }
}

class FailureCounter {
  private readonly failures: Limiter;
  private readonly gate: Limiter;

  constructor(
    private readonly rule: ThrottleRule,
    prefix: string,
    create: LimiterFactory,
  ) {
    // Never refuses: it only counts, and the gate decides.
    this.failures = create({ keyPrefix: `${prefix}:failures`, points: Number.MAX_SAFE_INTEGER, duration: rule.windowSeconds });
    // One attempt per wait; each key's lifetime is the wait it was created with.
    this.gate = create({ keyPrefix: `${prefix}:gate`, points: 1, duration: 1 });
  }

  /**
   * Counts the attempt before the password is checked, so that concurrent
   * guesses see each other. An attempt refused by the gate is not counted.
   */
  async take(key: string): Promise<void> {
    const counted = await this.failures.consume(key, 1);
    const over = counted.consumedPoints - this.rule.freeFailures;
    if (over <= 0) return;
    try {
      await this.gate.consume(key, 1, { customDuration: backoffSeconds(this.rule, over) });
    } catch (rejection) {
      await this.failures.reward(key, 1);
      if (rejection instanceof RateLimiterRes) throw new Throttled(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      throw rejection;
    }
  }

  release(key: string): Promise<unknown> {
    return this.failures.reward(key, 1);
  }

  async reset(key: string): Promise<void> {
    await Promise.all([this.failures.delete(key), this.gate.delete(key)]);
  }
}

export interface LoginThrottleOptions {
  /** A connected node-redis client: counters are shared through it. Absent: this process's memory. */
  redis?: unknown;
  pair?: ThrottleRule;
  account?: ThrottleRule;
  address?: ThrottleRule;
  device?: ThrottleRule;
  /** Signs device cookies (derived from the server's secret); the same on every node. */
  deviceKey?: Buffer;
  /** Where the counters live in Redis. */
  keyPrefix?: string;
  /** The clock the counters run on when they live in memory (Redis keeps its own time). */
  now?: () => Date;
}

/** Device cookies: a random id and a MAC binding it to the account's email. */
class DeviceCookies {
  constructor(private readonly key: Buffer) {}

  issue(email: string): string {
    const id = randomBytes(16).toString("base64url");
    return `${id}.${this.mac(id, email)}`;
  }

  /** The device's id when the cookie was issued to a browser that signed into this account, else null. */
  idFor(cookie: string | undefined, email: string): string | null {
    const [id, mac, extra] = cookie?.split(".") ?? [];
    if (!id || !mac || extra !== undefined || id.length > 64) return null;
    const expected = Buffer.from(this.mac(id, email));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
  }

  private mac(id: string, email: string): string {
    return createHmac("sha256", this.key).update(`${id}\n${email}`).digest("base64url");
  }
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const now = options.now ?? (() => new Date());
  const create: LimiterFactory = options.redis
    ? (limiterOptions) =>
        new RateLimiterRedis({
          ...limiterOptions,
          storeClient: options.redis,
          useRedisPackage: true,
          // While Redis is unreachable each node still throttles on its own.
          insuranceLimiter: new RateLimiterMemory(limiterOptions),
        })
    : (limiterOptions) => new ClockedMemoryLimiter(limiterOptions, () => now().getTime());
  const prefix = options.keyPrefix ?? "tollgate:login";
  const pair = new FailureCounter(options.pair ?? PAIR_RULE, `${prefix}:pair`, create);
  const account = new FailureCounter(options.account ?? ACCOUNT_RULE, `${prefix}:account`, create);
  const address = new FailureCounter(options.address ?? ADDRESS_RULE, `${prefix}:address`, create);
  const device = new FailureCounter(options.device ?? DEVICE_RULE, `${prefix}:device`, create);
  const cookies = new DeviceCookies(options.deviceKey ?? randomBytes(32));

  const refuse = (who: string, error: Throttled) => {
    const retryAt = new Date(now().getTime() + error.retryAfterSeconds * 1000);
    const seconds = error.retryAfterSeconds === 1 ? "1 second" : `${error.retryAfterSeconds} seconds`;
    return new DomainError("TOO_MANY_REQUESTS", `too many failed logins ${who}; try again in ${seconds} (after ${retryAt.toISOString()})`, {
      retryAfterSeconds: error.retryAfterSeconds,
      retryAt: retryAt.toISOString(),
    });
  };

  /** Takes one attempt on each counter in turn; a refusal gives back what the others took. */
  async function takeAll(counters: { counter: FailureCounter; key: string; who: string }[]): Promise<void> {
    const taken: { counter: FailureCounter; key: string }[] = [];
    for (const { counter, key, who } of counters) {
      try {
        await counter.take(key);
      } catch (error) {
        await Promise.all(taken.map((done) => done.counter.release(done.key)));
        throw error instanceof Throttled ? refuse(who, error) : error;
      }
      taken.push({ counter, key });
    }
  }

  return {
    async reserve(email, clientAddress, deviceCookie) {
      const deviceId = cookies.idFor(deviceCookie, email);
      if (deviceId !== null) {
        const key = `${deviceId}:${email}`;
        await takeAll([{ counter: device, key, who: `for ${email} on this device` }]);
        return {
          async succeeded() {
            await device.reset(key);
            return { device: deviceCookie! };
          },
        };
      }
      const pairKey = `${email}|${clientAddress ?? ""}`;
      await takeAll([
        { counter: pair, key: pairKey, who: clientAddress === undefined ? `for ${email}` : `for ${email} from ${clientAddress}` },
        { counter: account, key: email, who: `for ${email}` },
        ...(clientAddress !== undefined ? [{ counter: address, key: clientAddress, who: `from ${clientAddress}` }] : []),
      ]);
      return {
        async succeeded() {
          // The pair starts afresh; the account and the address only take back this
          // attempt, so one known password cannot wipe the failures of others.
          await Promise.all([pair.reset(pairKey), account.release(email), clientAddress !== undefined ? address.release(clientAddress) : undefined]);
          return { device: cookies.issue(email) };
        },
      };
    },
  };
}
