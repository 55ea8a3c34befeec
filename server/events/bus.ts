// The typed in-process event bus. Services publish after their transaction
// commits; the socket layer and waiting long-polls subscribe. Events are
// signals (the console reads again), except "approval:decided": its decision
// is the committed row's own, so agents' waiters answer from it unread.
import { EventEmitter } from "node:events";

export type RunStatusName = "RUNNING" | "PAUSED" | "COMPLETED" | "FAILED" | "CANCELED";
export type ApprovalStatusName = "PENDING" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED";

export interface DecisionPayload {
  action: "approve" | "reject" | "edit" | "respond";
  args?: unknown;
  message?: string;
  decidedBy: string;
  decidedAt: string;
  /** Who decided: a person, a policy rule, or the timeout's default. */
  decider?: "operator" | "policy" | "timeout" | "system";
  /** The rule that decided, when a policy did. */
  policyId?: string;
  /** A signed receipt (compact JWS) when the decision lets the tool run. */
  receipt?: string;
}

export interface TollgateEvents {
  "approval:requested": {
    workspaceId: string;
    approvalId: string;
    requestId: string;
    taskId: string;
    sessionId: string;
    tool: string;
    args: unknown;
    status: ApprovalStatusName;
    expiresAt: string | null;
    /** The approval's next escalation or reminder, if any. */
    escalateAt?: string | null;
  };
  /** An agent reported what it ran under an approval; `deviated`: not what was approved. */
  "approval:executed": { workspaceId: string; approvalId: string; sessionId: string; taskId: string; deviated: boolean };
  /**
   * Decisions' webhook deliveries were queued: this node's webhook deliverer
   * sends them (not bridged: other nodes find them when they next look).
   */
  "webhook:queued": { count: number };
  /** Announcements were written: the notification deliverer sends them. */
  "notification:queued": { workspaceId: string };
  "approval:decided": {
    workspaceId: string;
    sessionId: string;
    taskId: string;
    approvalId: string;
    requestId: string;
    /** The agent key that asked; its held connection gets the decision pushed. */
    agentKeyId: string | null;
    status: ApprovalStatusName;
    decision: DecisionPayload | null;
    /**
     * Set by the link between nodes when the decision did not fit its message:
     * whoever answers the agent reads the approval instead.
     */
    decisionOmitted?: true;
    /** When the agent asked (for time-to-decision). */
    requestedAt?: string;
  };
  /** One approver of several agreed; the approval still waits for the rest. */
  "approval:voted": { workspaceId: string; sessionId: string; approvalId: string; votes: number; required: number };
  "request:updated": { workspaceId: string; requestId: string; taskId: string; sessionId: string; status: RunStatusName };
  "task:updated": { workspaceId: string; taskId: string; sessionId: string; status: RunStatusName };
  "session:updated": { workspaceId: string; sessionId: string };
  "state:saved": { workspaceId: string; sessionId: string; taskId: string; version: number };
  "audit:appended": { workspaceId: string; seq: number };
  /** An agent key was revoked or its trust changed: every node drops it from its cache, and closes its sockets if revoked (not forwarded to browsers). */
  "agent-key:changed": { workspaceId: string; agentKeyId: string; keyHash: string; revoked: boolean };
  /** An operator session was logged out or revoked (not forwarded to browsers). */
  "operator:session-ended": { workspaceId: string; sessionId: string };
  /** An operator's role or access changed: every node reads their sessions again (not forwarded to browsers). */
  "operator:changed": { workspaceId: string; operatorId: string };
  /**
   * The link to the other nodes came back after a drop: events sent meanwhile
   * were missed, so every socket this node holds is told to read again (not bridged).
   */
  "bridge:resumed": { transport: string };
}

export type EventName = keyof TollgateEvents;

/** Where an event came from: this node, or another node through the Redis bridge. */
export type EventOrigin = "local" | "remote";

export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every long-poll and socket adds a listener; there is no fixed ceiling.
    this.emitter.setMaxListeners(0);
  }

  publish<E extends EventName>(name: E, payload: TollgateEvents[E], origin: EventOrigin = "local"): void {
    this.emitter.emit(name, payload, origin);
  }

  /** Subscribes; the returned function unsubscribes. */
  on<E extends EventName>(name: E, listener: (payload: TollgateEvents[E], origin: EventOrigin) => void): () => void {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }
}

/** Events the console's sockets receive (in the workspace's room). */
export const EVENT_NAMES: EventName[] = [
  "approval:requested",
  "approval:decided",
  "approval:voted",
  "approval:executed",
  "notification:queued",
  "request:updated",
  "task:updated",
  "session:updated",
  "state:saved",
  "audit:appended",
];

/** Events every node hears from the others (see bridge.ts): the console's, and the ones that end access. */
export const BRIDGED_EVENTS: EventName[] = [...EVENT_NAMES, "operator:session-ended", "operator:changed", "agent-key:changed"];
