// The event bridge's PostgreSQL transport (LISTEN/NOTIFY), on PostgreSQL: what
// one node publishes reaches another in order, and messages published while a
// NOTIFY is on its way go together in the next one, never as a second query
// on a connection that is busy (which pg 9 refuses).
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { bridgeBus } from "../server/events/bridge.ts";
import { EventBus } from "../server/events/bus.ts";
import { postgresTransport } from "../server/events/postgres-transport.ts";
import { createEmptyPostgresDatabase } from "./harness.ts";
import { describeWith, needsPostgres } from "./requires.ts";

describeWith(needsPostgres())("the event bridge over LISTEN/NOTIFY", () => {
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

describeWith(needsPostgres())("the event bridge between two nodes over LISTEN/NOTIFY", () => {
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

describeWith(needsPostgres())("the event bridge sends nothing while no other node listens", () => {
  let url: string;
  let drop: () => Promise<void>;
  let notifies = 0;
  let spy: { mockRestore(): void } | undefined;
  beforeAll(async () => {
    ({ url, drop } = await createEmptyPostgresDatabase());
  });
  afterAll(() => drop());
  beforeEach(() => {
    // Counts the NOTIFYs that carry messages (not a node's announcement of itself); runs them as before.
    notifies = 0;
    const query = pg.Client.prototype.query;
    spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      if (String(args[0]).includes("unnest")) notifies++;
      return (query as (...a: unknown[]) => unknown).apply(this, args) as never;
    });
  });
  afterEach(() => spy?.mockRestore());

  it("a node alone sends no NOTIFY, and sends to a node that joins as soon as it hears it announce itself", async () => {
    // Told nothing new by pg_stat_activity for a minute: only the announcement can tell it of the second node.
    const first = await postgresTransport(url, { peerCheckMs: 60_000 });
    let second: Awaited<ReturnType<typeof postgresTransport>> | undefined;
    try {
      await first.publish("alone 1");
      await first.publish("alone 2");
      expect(notifies).toBe(0);
      second = await postgresTransport(url, { peerCheckMs: 60_000 });
      const received: string[] = [];
      await second.subscribe((message) => received.push(message));
      await vi.waitFor(async () => {
        await first.publish("together");
        expect(received).toContain("together");
      });
      expect(received).not.toContain("alone 1");
    } finally {
      await Promise.all([first.close(), second?.close()]);
    }
  });

  it("a node stops sending once the other nodes have gone", async () => {
    const [staying, leaving] = [await postgresTransport(url, { peerCheckMs: 50 }), await postgresTransport(url, { peerCheckMs: 50 })];
    try {
      await staying.publish("both here");
      expect(notifies).toBe(1);
      await leaving.close();
      // PostgreSQL drops the closed connection from pg_stat_activity as its backend exits.
      await vi.waitFor(
        async () => {
          const before = notifies;
          await staying.publish("alone again");
          expect(notifies).toBe(before);
        },
        { timeout: 5_000, interval: 50 },
      );
    } finally {
      await staying.close();
    }
  });
});
