// What every use case is given: the database, the event bus and the clock.
import type { PrismaClient } from "../db/client.ts";
import type { Prisma } from "../db/generated/client.ts";
import type { EventBus } from "../events/bus.ts";
import type { AgentKeyCache } from "./auth.ts";

export interface ServiceDeps {
  prisma: PrismaClient;
  bus: EventBus;
  now: () => Date;
  sessionTtlHours: number;
  agentKeyCache: AgentKeyCache;
}

export function createServiceDeps(prisma: PrismaClient, bus: EventBus, sessionTtlHours = 12): ServiceDeps {
  return { prisma, bus, now: () => new Date(), sessionTtlHours, agentKeyCache: new Map() };
}

export type Tx = Prisma.TransactionClient;
