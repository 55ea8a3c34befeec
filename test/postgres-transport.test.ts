// The event bridge's PostgreSQL transport (LISTEN/NOTIFY), on PostgreSQL: what
// one node publishes reaches another in order, and messages published while a
// NOTIFY is on its way go together in the next one, never as a second query
// on a connection that is busy (which pg 9 refuses).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bridgeBus } from "../server/events/bridge.ts";
import { EventBus } from "../server/events/bus.ts";
import { postgresTransport } from "../server/events/postgres-transport.ts";
import { createEmptyPostgresDatabase, TEST_TARGET } from "./harness.ts";

describe.skipIf(TEST_TARGET !== "postgres")("the event bridge over LISTEN/NOTIFY", () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createEmptyPostgresDatabase());
  });
  afterAll(() => drop());

  it("a burst of messages arrives whole and in order, in a few statements, one at a time on the connection", async () => {
    const [sender, receiver] = [await postgresTransport(url), await postgresTransport(url)];
    const received: string[] = [];
    const allReceived = new Promise<void>((resolve) =>
      receiver.subscribe((message) => {
        received.push(message);
        if (received.length === 50) resolve();
      }),
    );
    // Observes the driver's queries (it runs them as before).
    const query = pg.Client.prototype.query;
    let busy = 0;
    let mostAtOnce = 0;
    let notifies = 0;
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      if (String(args[0]).includes("pg_notify")) notifies++;
      mostAtOnce = Math.max(mostAtOnce, ++busy);
      const result = (query as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      return Promise.resolve(result).finally(() => busy--) as never;
    });
    try {
      const messages = Array.from({ length: 50 }, (_, i) => JSON.stringify({ i }));
      await Promise.all(messages.map((message) => sender.publish(message)));
      await allReceived;
      expect(received).toEqual(messages);
      expect(mostAtOnce).toBe(1);
      // The first goes alone; the 49 published meanwhile go together.
      expect(notifies).toBe(2);
    } finally {
      spy.mockRestore();
      await Promise.all([sender.close(), receiver.close()]);
    }
  });
});

describe.skipIf(TEST_TARGET !== "postgres")("the event bridge between two nodes over LISTEN/NOTIFY", () => {
  it("events alike in content all arrive, in order, even when they go in one NOTIFY (PostgreSQL delivers identical ones once)", async () => {
    const { url, drop } = await createEmptyPostgresDatabase();
    const [busA, busB] = [new EventBus(), new EventBus()];
    const [bridgeA, bridgeB] = [await bridgeBus(busA, await postgresTransport(url)), await bridgeBus(busB, await postgresTransport(url))];
    try {
      const heard: string[] = [];
      const allHeard = new Promise<void>((resolve) =>
        busB.on("request:updated", ({ status }) => {
          heard.push(status);
          if (heard.length === 5) resolve();
        }),
      );
      const statuses = ["PAUSED", "RUNNING", "PAUSED", "RUNNING", "PAUSED"] as const;
      for (const status of statuses) busA.publish("request:updated", { workspaceId: "ws_1", requestId: "req_1", taskId: "tsk_1", sessionId: "ses_1", status });
      await allHeard;
      expect(heard).toEqual(statuses);
    } finally {
      await Promise.all([bridgeA.close(), bridgeB.close()]);
      await drop();
    }
  });
});
