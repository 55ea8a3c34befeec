// The event bridge over Redis pub/sub: one channel (TOLLGATE_REDIS_CHANNEL), a
// publishing and a subscribing connection (Redis reserves a subscribed
// connection for messages).
import { createClient } from "redis";
import { log } from "../log.ts";
import type { BridgeTransport } from "./bridge.ts";

export async function redisTransport(redisUrl: string, channel: string): Promise<BridgeTransport> {
  // While Redis is away a publish fails at once instead of piling up in memory
  // for an outage of any length; the other nodes' clients read again when their
  // subscriptions come back (onResumed), so nothing that mattered is lost.
  const publisher = createClient({ url: redisUrl, disableOfflineQueue: true });
  const subscriber = createClient({ url: redisUrl });
  for (const client of [publisher, subscriber]) client.on("error", (error) => log.warn("event bridge (redis)", error));
  await Promise.all([publisher.connect(), subscriber.connect()]);
  // node-redis reconnects by itself and subscribes again; "ready" after the
  // first one means the subscription was down for a while.
  const resumedListeners: Array<() => void> = [];
  subscriber.on("ready", () => {
    for (const listener of resumedListeners) listener();
  });
  return {
    name: "redis",
    onResumed: (listener) => void resumedListeners.push(listener),
    publish: async (message) => void (await publisher.publish(channel, message)),
    subscribe: (onMessage) => subscriber.subscribe(channel, onMessage),
    async close() {
      await Promise.all([subscriber.quit(), publisher.quit()].map((closing) => closing.catch(() => undefined)));
    },
  };
}
