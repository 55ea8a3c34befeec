// The one channel between the nodes of a deployment: every bus event a node
// publishes reaches the buses of the others, which wake their long-polls and
// decision streams, push to the sockets they hold (browsers and agents), drop
// revoked sessions and keys, and re-arm their timers. It runs over Redis
// pub/sub when REDIS_URL is set, else over PostgreSQL LISTEN/NOTIFY when the
// nodes share a PostgreSQL server. Events are signals and clients read the
// database again, with one exception: a decision's event carries the whole,
// committed, write-once decision, so an agent's waiters are answered from it.
// A message lost while a connection was down delays but never corrupts.
import { randomUUID } from "node:crypto";
import { log } from "../log.ts";
import { BRIDGED_EVENTS, type EventBus, type EventName } from "./bus.ts";

export interface BridgeTransport {
  /** "redis" or "postgres", for logs. */
  readonly name: string;
  /** The largest message it carries (PostgreSQL's NOTIFY takes under 8000 bytes). */
  readonly maxMessageBytes?: number;
  publish(message: string): Promise<void>;
  subscribe(onMessage: (message: string) => void): Promise<void>;
  /** Called each time the transport is back after losing its connection (never for the first one). */
  onResumed(listener: () => void): void;
  close(): Promise<void>;
}

export interface Bridge {
  readonly transport: string;
  close(): Promise<void>;
}

/**
 * The message, made to fit the transport: the unbounded part of an event is
 * left out first (a request's arguments, or a decision with its edited
 * arguments and message), marked as omitted, as every listener that needs it
 * then reads the approval. Null when it still does not fit.
 */
function fitted(transport: BridgeTransport, message: string, parts: { from: string; seq: number; name: EventName; payload: unknown }): string | null {
  const limit = transport.maxMessageBytes;
  if (!limit || Buffer.byteLength(message) <= limit) return message;
  const payload = parts.payload as Record<string, unknown>;
  const slimmed =
    "args" in payload
      ? { ...payload, args: null, argsOmitted: true }
      : parts.name === "approval:decided"
        ? { ...payload, decision: null, decisionOmitted: true }
        : null;
  if (!slimmed) return null;
  const smaller = JSON.stringify({ ...parts, payload: slimmed });
  return Buffer.byteLength(smaller) <= limit ? smaller : null;
}

export async function bridgeBus(bus: EventBus, transport: BridgeTransport): Promise<Bridge> {
  const nodeId = randomUUID();
  await transport.subscribe((message) => {
    try {
      const { from, name, payload } = JSON.parse(message) as { from: string; name: EventName; payload: never };
      if (from !== nodeId && BRIDGED_EVENTS.includes(name)) bus.publish(name, payload, "remote");
    } catch (error) {
      log.warn(`event bridge (${transport.name}): unreadable message`, error);
    }
  });

  // Messages published while the link was down are gone: the clients of this
  // node read again instead (waking is only a hint, the database is the truth).
  transport.onResumed(() => {
    log.info(`event bridge (${transport.name}): connected again; telling this node's clients to read again`);
    bus.publish("bridge:resumed", { transport: transport.name });
  });

  // Numbered, so no two messages are alike: PostgreSQL delivers identical
  // notifications sent in one transaction only once (a request PAUSED,
  // RUNNING, PAUSED again would end RUNNING on the other nodes).
  let seq = 0;
  const unsubscribers = BRIDGED_EVENTS.map((name) =>
    bus.on(name, (payload, origin) => {
      if (origin !== "local") return;
      const parts = { from: nodeId, seq: ++seq, name, payload };
      const message = fitted(transport, JSON.stringify(parts), parts);
      if (!message) {
        log.warn(`event bridge (${transport.name}): ${name} is too large to carry; other nodes learn of it when they next read the database`);
        return;
      }
      transport.publish(message).catch((error) => log.warn(`event bridge (${transport.name}): publish failed`, error));
    }),
  );

  return {
    transport: transport.name,
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await transport.close().catch(() => undefined);
    },
  };
}
