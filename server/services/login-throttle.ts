// Slows password guessing: failed logins are counted per account (email) and
// per client address. A few failures are free; after that every attempt opens a
// wait that doubles each time. Counters live in memory on one node, or in
// Redis so that every node of a deployment shares them.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { DomainError } from "../domain/errors.ts";

export interface ThrottleRule {
  /** Failures allowed within the window before waits begin. */
  freeFailures: number;
  /** Failures are forgotten this long after the first one. */
  windowSeconds: number;
  /** The longest wait between two attempts. */
  maxBackoffSeconds: number;
}

export const ACCOUNT_RULE: ThrottleRule = { freeFailures: 5, windowSeconds: 3600, maxBackoffSeconds: 900 };
// Higher, because many people can share one address (an office, a VPN).
export const ADDRESS_RULE: ThrottleRule = { freeFailures: 20, windowSeconds: 3600, maxBackoffSeconds: 3600 };

/** A reserved attempt: counted as a failure unless the login succeeds. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /** Counts one attempt for the account and the address; TOO_MANY_REQUESTS when either must wait. */
  reserve(email: string, address: string | undefined): Promise<LoginAttempt>;
}

type LimiterFactory = (options: { keyPrefix: string; points: number; duration: number }) => RateLimiterAbstract;

/** Waits are whole seconds: Redis expiries and Retry-After are in seconds. */
export const backoffSeconds = (rule: ThrottleRule, failuresOverFree: number) =>
  Math.min(rule.maxBackoffSeconds, 2 ** Math.min(failuresOverFree - 1, 30));

class Throttled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("throttled");
  }
}

class FailureCounter {
  private readonly failures: RateLimiterAbstract;
  private readonly gate: RateLimiterAbstract;

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
  account?: ThrottleRule;
  address?: ThrottleRule;
  /** Where the counters live in Redis. */
  keyPrefix?: string;
  now?: () => Date;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const create: LimiterFactory = options.redis
    ? (limiterOptions) =>
        new RateLimiterRedis({
          ...limiterOptions,
          storeClient: options.redis,
          useRedisPackage: true,
          // While Redis is unreachable each node still throttles on its own.
          insuranceLimiter: new RateLimiterMemory(limiterOptions),
        })
    : (limiterOptions) => new RateLimiterMemory(limiterOptions);
  const prefix = options.keyPrefix ?? "tollgate:login";
  const account = new FailureCounter(options.account ?? ACCOUNT_RULE, `${prefix}:account`, create);
  const address = new FailureCounter(options.address ?? ADDRESS_RULE, `${prefix}:address`, create);
  const now = options.now ?? (() => new Date());

  const refuse = (who: string, error: Throttled) => {
    const retryAt = new Date(now().getTime() + error.retryAfterSeconds * 1000);
    const seconds = error.retryAfterSeconds === 1 ? "1 second" : `${error.retryAfterSeconds} seconds`;
    return new DomainError("TOO_MANY_REQUESTS", `too many failed logins ${who}; try again in ${seconds} (after ${retryAt.toISOString()})`, {
      retryAfterSeconds: error.retryAfterSeconds,
      retryAt: retryAt.toISOString(),
    });
  };

  return {
    async reserve(email, clientAddress) {
      try {
        await account.take(email);
      } catch (error) {
        throw error instanceof Throttled ? refuse(`for ${email}`, error) : error;
      }
      if (clientAddress !== undefined) {
        try {
          await address.take(clientAddress);
        } catch (error) {
          await account.release(email);
          throw error instanceof Throttled ? refuse(`from ${clientAddress}`, error) : error;
        }
      }
      return {
        async succeeded() {
          // The account starts afresh; the address only takes back this attempt,
          // so one known password cannot wipe the failures of others tried from it.
          await Promise.all([account.reset(email), clientAddress !== undefined ? address.release(clientAddress) : undefined]);
        },
      };
    },
  };
}
