// Deployments sharing one Redis (two checkouts' demo clusters, say) hear only
// their own events: each bridges on its TOLLGATE_REDIS_CHANNEL.
import { randomUUID } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import type { BridgeTransport } from "../server/events/bridge.ts";
import { redisTransport } from "../server/events/redis-transport.ts";
import { describeWith, needsRedis, REDIS_URL, redisAnswers } from "./requires.ts";

describeWith(needsRedis(await redisAnswers(), REDIS_URL))("the Redis event channel", () => {
  const opened: BridgeTransport[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((transport) => transport.close()));
  });

  /** A transport on `channel`, and the messages it has heard. */
  async function listening(channel: string) {
    const transport = await redisTransport(REDIS_URL, channel);
    opened.push(transport);
    const heard: string[] = [];
    await transport.subscribe((message) => heard.push(message));
    return { transport, heard };
  }

  async function until(condition: () => boolean) {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  }

  it("a node hears the events of its own channel only", async () => {
    const ours = `tollgate:test:${randomUUID()}:events`;
    const theirs = `tollgate:test:${randomUUID()}:events`;
    const node1 = await listening(ours);
    const node2 = await listening(ours);
    const otherDeployment = await listening(theirs);
    await node1.transport.publish("ours");
    // Published after ours was accepted: had the other deployment heard ours, it came first.
    await otherDeployment.transport.publish("theirs");
    await until(() => node2.heard.length > 0 && otherDeployment.heard.includes("theirs"));
    expect(node2.heard).toEqual(["ours"]);
    expect(otherDeployment.heard).toEqual(["theirs"]);
  });
});
