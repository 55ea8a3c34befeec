// What every use case is given: the database, the event bus and the clock.
import type { PrismaClient } from "../db/client.ts";
import type { Prisma } from "../db/generated/client.ts";
import type { EventBus } from "../events/bus.ts";
import { DecisionWaiters } from "../events/waiters.ts";
import type { AgentKeyCache } from "./auth.ts";
import type { PolicyCache } from "./policies/policy-cache.ts";

export interface ServiceDeps {
  prisma: PrismaClient;
  bus: EventBus;
  now: () => Date;
  sessionTtlHours: number;
  agentKeyCache: AgentKeyCache;
  waiters: DecisionWaiters;
  /** Compiled policy rules per workspace, checked against the workspace's policyVersion. */
  policyCache: PolicyCache;
  /** Aborted when the server shuts down, so long-polls answer at once. */
  shutdown: AbortSignal;
}

export function createServiceDeps(
  prisma: PrismaClient,
  bus: EventBus,
  options: { sessionTtlHours?: number; shutdown?: AbortSignal } = {},
): ServiceDeps {
  return {
    prisma,
    bus,
    now: () => new Date(),
    sessionTtlHours: options.sessionTtlHours ?? 12,
    agentKeyCache: new Map(),
    waiters: new DecisionWaiters(bus),
    policyCache: new Map(),
    shutdown: options.shutdown ?? new AbortController().signal,
  };
}

export type Tx = Prisma.TransactionClient;
