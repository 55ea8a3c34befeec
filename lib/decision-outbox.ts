// Decisions made in the console wait here for a few seconds before they are sent,
// so the operator can take one back (Undo). Only the browser waits: the server
// records a decision once, when it arrives, and pushes it to the agent at once.
// A page that closes sends what waits (a keepalive request outlives the page); a
// send the network refused waits for the connection and is tried again, and the
// page warns before closing while one is unsent.
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/router";
import { decidedByMe, type AlreadyDecided } from "./errors";

export type DecideInput = inferRouterInputs<AppRouter>["approval"]["decide"];
export type DecideResult = inferRouterOutputs<AppRouter>["approval"]["decide"];

/** How long a decision can be taken back. */
export const UNDO_WINDOW_MS = 5_000;
/** How long the confirmation of a sent decision stays on screen. */
const CONFIRMATION_MS = 6_000;

export type SendResult =
  | { ok: true; data: DecideResult }
  | { ok: false; network: true }
  | { ok: false; network: false; code?: string; message: string; late?: AlreadyDecided };

/**
 * waiting: within the undo window; sending; unsent: the network failed, tried again
 * when the connection is back; sent; voted: one vote of a quorum; late: someone
 * else decided first, nothing of ours was recorded; failed: refused, with why;
 * undone: taken back, never sent.
 */
export type EntryState = "waiting" | "sending" | "unsent" | "sent" | "voted" | "late" | "failed" | "undone";

export interface OutboxEntry {
  approvalId: string;
  input: DecideInput;
  /** What was decided, in words: "send_email for A2". */
  subject: string;
  state: EntryState;
  /** When it is sent unless taken back (for the countdown). */
  dueAt: number;
  late?: AlreadyDecided;
  note?: string;
}

export interface OutboxOptions {
  windowMs: number;
  send(input: DecideInput): Promise<SendResult>;
  now?: () => number;
}

const WAITS_TO_SEND: ReadonlySet<EntryState> = new Set(["waiting", "unsent"]);

export class DecisionOutbox {
  private readonly entries = new Map<string, OutboxEntry>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly listeners = new Set<() => void>();
  /** Who queued each decision: a decision the server returns as someone else's was late. */
  private readonly emails = new Map<string, string>();
  private snapshot: readonly OutboxEntry[] = [];
  private readonly now: () => number;

  constructor(private readonly options: OutboxOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Queues a decision; false when one for this approval is already waiting or being sent. */
  queue(input: DecideInput, subject: string, myEmail: string): boolean {
    const current = this.entries.get(input.approvalId);
    if (current && (WAITS_TO_SEND.has(current.state) || current.state === "sending")) return false;
    this.clearTimer(input.approvalId);
    this.entries.set(input.approvalId, { approvalId: input.approvalId, input, subject, state: "waiting", dueAt: this.now() + this.options.windowMs });
    this.emails.set(input.approvalId, myEmail);
    this.timers.set(input.approvalId, setTimeout(() => void this.send(input.approvalId), this.options.windowMs));
    this.changed();
    return true;
  }

  /** Takes a decision back before it is sent; false once it has gone. */
  undo(approvalId: string): boolean {
    const entry = this.entries.get(approvalId);
    if (!entry || !WAITS_TO_SEND.has(entry.state)) return false;
    this.clearTimer(approvalId);
    this.update(approvalId, { state: "undone" });
    this.dismissLater(approvalId, CONFIRMATION_MS);
    return true;
  }

  sendNow(approvalId: string) {
    const entry = this.entries.get(approvalId);
    if (entry && WAITS_TO_SEND.has(entry.state)) void this.send(approvalId);
  }

  /** The connection is back: what the network refused is sent again. */
  retryUnsent() {
    for (const entry of this.entries.values()) if (entry.state === "unsent") void this.send(entry.approvalId);
  }

  /** The page is closing: everything still waiting goes now (the requests outlive the page). */
  flushOnExit() {
    for (const entry of this.entries.values()) if (entry.state === "waiting") void this.send(entry.approvalId);
  }

  /** Whether a decision the network refused waits to be sent again. */
  hasUnsent(): boolean {
    return [...this.entries.values()].some((entry) => entry.state === "unsent");
  }

  dismiss(approvalId: string) {
    const entry = this.entries.get(approvalId);
    if (!entry || WAITS_TO_SEND.has(entry.state) || entry.state === "sending") return;
    this.entries.delete(approvalId);
    this.clearTimer(approvalId);
    this.changed();
  }

  get(approvalId: string): OutboxEntry | undefined {
    return this.entries.get(approvalId);
  }

  list(): readonly OutboxEntry[] {
    return this.snapshot;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async send(approvalId: string) {
    const entry = this.entries.get(approvalId);
    if (!entry || !WAITS_TO_SEND.has(entry.state)) return;
    this.clearTimer(approvalId);
    this.update(approvalId, { state: "sending" });
    let result: SendResult;
    try {
      result = await this.options.send(entry.input);
    } catch {
      result = { ok: false, network: true };
    }
    const email = this.emails.get(approvalId) ?? "";
    if (result.ok) {
      const { data } = result;
      if (data.status === "PENDING") {
        this.update(approvalId, { state: "voted", note: `${data.approvals?.length ?? 1} of ${data.required ?? "?"} approvals; it waits for the other approvers` });
      } else if (data.decision && !decidedByMe(data, email)) {
        this.update(approvalId, { state: "late", late: { decidedBy: data.decision.decidedBy, decidedAt: data.decision.decidedAt, action: data.decision.action, status: data.status } });
        return;
      } else {
        this.update(approvalId, { state: "sent" });
      }
      this.dismissLater(approvalId, CONFIRMATION_MS);
    } else if (result.network) {
      this.update(approvalId, { state: "unsent" });
    } else if (result.late) {
      this.update(approvalId, { state: "late", late: result.late });
    } else {
      this.update(approvalId, { state: "failed", note: result.message });
    }
  }

  private dismissLater(approvalId: string, ms: number) {
    this.clearTimer(approvalId);
    this.timers.set(approvalId, setTimeout(() => this.dismiss(approvalId), ms));
  }

  private clearTimer(approvalId: string) {
    const timer = this.timers.get(approvalId);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(approvalId);
  }

  private update(approvalId: string, change: Partial<OutboxEntry>) {
    const entry = this.entries.get(approvalId);
    if (!entry) return;
    this.entries.set(approvalId, { ...entry, ...change });
    this.changed();
  }

  private changed() {
    this.snapshot = [...this.entries.values()];
    for (const listener of this.listeners) listener();
  }
}

/** Browsers keep at most 64 KB of keepalive requests in flight per page. */
const KEEPALIVE_BYTES = 60_000;

/**
 * One decision over plain HTTP, as tRPC takes a mutation. A keepalive request
 * outlives the page, so a decision being sent as the tab closes still arrives.
 */
export async function sendDecision(input: DecideInput): Promise<SendResult> {
  const body = JSON.stringify(input);
  let response: Response;
  try {
    response = await fetch("/api/trpc/approval.decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      credentials: "same-origin",
      keepalive: body.length < KEEPALIVE_BYTES,
    });
  } catch {
    return { ok: false, network: true };
  }
  const answer = (await response.json().catch(() => null)) as {
    result?: { data: DecideResult };
    error?: { message: string; data?: { code?: string; details?: Record<string, unknown> | null } };
  } | null;
  if (answer?.result) return { ok: true, data: answer.result.data };
  // A gateway's error page, not the server's answer: the decision did not arrive.
  if (!answer?.error) return { ok: false, network: true };
  const { code, details } = answer.error.data ?? {};
  const late =
    code === "CONFLICT" && typeof details?.decidedBy === "string"
      ? {
          decidedBy: details.decidedBy,
          decidedAt: typeof details.decidedAt === "string" ? details.decidedAt : undefined,
          action: typeof details.action === "string" ? details.action : undefined,
          status: typeof details.status === "string" ? details.status : undefined,
        }
      : undefined;
  return { ok: false, network: false, code, message: answer.error.message, late };
}

let shared: DecisionOutbox | undefined;

/** The page's one outbox: it outlives the screens of the console, which come and go. */
export function decisionOutbox(): DecisionOutbox {
  if (shared) return shared;
  const outbox = new DecisionOutbox({ windowMs: UNDO_WINDOW_MS, send: sendDecision });
  shared = outbox;
  if (typeof window !== "undefined") {
    // A decision the network refused cannot go as the page closes either: ask before leaving.
    window.addEventListener("beforeunload", (event) => {
      if (outbox.hasUnsent()) event.preventDefault();
    });
    window.addEventListener("pagehide", () => outbox.flushOnExit());
    window.addEventListener("online", () => outbox.retryUnsent());
  }
  return outbox;
}
