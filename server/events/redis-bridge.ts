// Carries bus events between nodes through Redis pub/sub, so a long-poll or a
// decision stream on one node wakes when another node commits the decision.
// Waking is only a hint: waiters always re-read the database.
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import { log } from "../log.ts";
import { EVENT_NAMES, type EventBus, type EventName } from "./bus.ts";

const CHANNEL = "tollgate:events";

export interface RedisBridge {
  close(): Promise<void>;
}

export async function bridgeBusThroughRedis(bus: EventBus, redisUrl: string): Promise<RedisBridge> {
  const nodeId = randomUUID();
  const publisher = createClient({ url: redisUrl });
  const subscriber = publisher.duplicate();
  for (const client of [publisher, subscriber]) client.on("error", (error) => log.warn("redis bridge", error));
  await Promise.all([publisher.connect(), subscriber.connect()]);

  await subscriber.subscribe(CHANNEL, (message) => {
    try {
      const { from, name, payload } = JSON.parse(message) as { from: string; name: EventName; payload: never };
      if (from !== nodeId && EVENT_NAMES.includes(name)) bus.publish(name, payload, "remote");
    } catch (error) {
      log.warn("redis bridge: unreadable message", error);
    }
  });

  const unsubscribers = EVENT_NAMES.map((name) =>
    bus.on(name, (payload, origin) => {
      if (origin !== "local") return;
      publisher.publish(CHANNEL, JSON.stringify({ from: nodeId, name, payload })).catch((error) => log.warn("redis bridge publish failed", error));
    }),
  );

  return {
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await Promise.all([subscriber.quit(), publisher.quit()].map((closing) => closing.catch(() => undefined)));
    },
  };
}
