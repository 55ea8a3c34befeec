// The event bridge over PostgreSQL LISTEN/NOTIFY, for nodes that share a
// PostgreSQL server and no Redis. One dedicated connection listens and
// notifies; when it drops, it reconnects with growing waits and listens again.
//
// A node that is alone sends nothing: a NOTIFY nobody else hears costs a
// statement, a write and PostgreSQL's work for each use case's events. The
// other nodes are the other connections with this connection's application
// name in pg_stat_activity (asked at most once a second, when there is
// something to send), and a node announces itself with an empty notification
// as it starts listening, so the others send again from the moment they hear it.
import pg from "pg";
import { log } from "../log.ts";
import type { BridgeTransport } from "./bridge.ts";

const CHANNEL = "tollgate_events";
// NOTIFY payloads must be shorter than 8000 bytes.
const MAX_PAYLOAD_BYTES = 7_900;
const MAX_RECONNECT_MS = 30_000;
const APPLICATION_NAME = "tollgate-events";
// The other nodes' event connections on this database.
const COUNT_OTHER_NODES = `SELECT count(*)::int AS others FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`;

export interface PostgresTransportOptions {
  /** How long what pg_stat_activity said about the other nodes is believed (default 1 s). */
  peerCheckMs?: number;
}

export async function postgresTransport(databaseUrl: string, options: PostgresTransportOptions = {}): Promise<BridgeTransport> {
  const peerCheckMs = options.peerCheckMs ?? 1_000;
  let client: pg.Client | undefined;
  let onMessage: ((message: string) => void) | undefined;
  let closed = false;
  let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  const resumedListeners: Array<() => void> = [];

  async function connect(): Promise<pg.Client> {
    const next = new pg.Client({ connectionString: databaseUrl, application_name: APPLICATION_NAME });
    let ownPid: number | undefined;
    next.on("notification", (notification) => {
      if (notification.channel !== CHANNEL) return;
      if (notification.processId !== ownPid) heardOtherNodeAt = performance.now();
      if (notification.payload) onMessage?.(notification.payload);
    });
    next.on("error", (error) => log.warn("event bridge (postgres)", error));
    next.on("end", () => {
      if (closed || client !== next) return;
      client = undefined;
      log.warn("event bridge (postgres): connection lost; reconnecting");
      scheduleReconnect(1_000);
    });
    await next.connect();
    // Known before its own announcement comes back to it.
    ownPid = (await next.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    await next.query(`LISTEN ${CHANNEL}`);
    // Here I am: the other nodes send to this one from now on (an empty payload carries no event).
    await next.query("SELECT pg_notify($1, '')", [CHANNEL]);
    return next;
  }

  function scheduleReconnect(waitMs: number) {
    reconnectTimer = setTimeout(() => {
      connect().then(
        (next) => {
          if (closed) return void next.end();
          client = next;
          log.info("event bridge (postgres): listening again");
          for (const listener of resumedListeners) listener();
        },
        (error: unknown) => {
          log.warn(`event bridge (postgres): reconnecting failed; trying again in ${Math.min(waitMs * 2, MAX_RECONNECT_MS) / 1000} s`, error);
          if (!closed) scheduleReconnect(Math.min(waitMs * 2, MAX_RECONNECT_MS));
        },
      );
    }, waitMs);
  }

  // A message goes out at once when no NOTIFY is on its way; those published
  // meanwhile go together in the next one, so a use case's events (a
  // decision, its requests, their tasks) cost two statements, not one each,
  // and the connection never has two queries at once. PostgreSQL delivers a
  // transaction's notifications in order, and identical ones only once (the
  // bridge numbers its messages, so none are identical).
  let queued: { message: string; settle: (error?: unknown) => void }[] = [];
  let sending = false;

  // What is known of the other nodes: how many listened when last asked, and when one was last heard.
  let otherNodes: { count: number; at: number } | undefined;
  let heardOtherNodeAt = -Infinity;

  /** Whether another node may be listening; asks PostgreSQL when its last answer is old. Unsure means yes. */
  async function othersMayListen(connection: pg.Client): Promise<boolean> {
    const now = performance.now();
    if (now - heardOtherNodeAt < peerCheckMs) return true;
    if (!otherNodes || now - otherNodes.at >= peerCheckMs) {
      try {
        const { rows } = await connection.query<{ others: number }>(COUNT_OTHER_NODES, [APPLICATION_NAME]);
        otherNodes = { count: rows[0]!.others, at: now };
      } catch (error) {
        otherNodes = undefined;
        log.warn("event bridge (postgres): could not count the other nodes; notifying them", error);
        return true;
      }
    }
    return otherNodes.count > 0 || performance.now() - heardOtherNodeAt < peerCheckMs;
  }

  async function sendQueued(): Promise<void> {
    sending = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      let failure: unknown;
      try {
        // Events of a node that is shutting down have nobody left to tell here.
        if (!closed) {
          if (!client) throw new Error("not connected (reconnecting)");
          if (await othersMayListen(client)) {
            await client.query("SELECT pg_notify($1, message) FROM unnest($2::text[]) AS message", [CHANNEL, batch.map((each) => each.message)]);
          }
        }
      } catch (error) {
        if (!closed) failure = error;
      }
      for (const each of batch) each.settle(failure);
    }
    sending = false;
  }

  client = await connect();
  return {
    name: "postgres",
    maxMessageBytes: MAX_PAYLOAD_BYTES,
    publish(message) {
      if (closed) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queued.push({ message, settle: (error) => (error === undefined ? resolve() : reject(error)) });
        if (!sending) void sendQueued();
      });
    },
    async subscribe(listener) {
      onMessage = listener;
    },
    onResumed: (listener) => void resumedListeners.push(listener),
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      await client?.end().catch(() => undefined);
    },
  };
}
