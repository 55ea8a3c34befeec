// An agent asks again and again within one request (a turn's tool calls, a
// loop of them), and the facts its gate depends on rarely change between
// asks. The write checks them behind the chain's lock anyway (their
// fingerprint and the request's status, tollgate_open_approval_if_unchanged),
// so the node remembers the facts an ask read, and the next ask on that
// request with that key is one statement: it skips the read. Facts that
// changed cost the read after all: the write answers 'stale', the facts are
// forgotten, and the ask is made on facts read again. The key's authority over
// the request is checked on every ask, with the key as it is now.
import { LRUCache } from "lru-cache";
import { mayActOn } from "../../domain/authority.ts";
import type { RunStatus, TimeoutOutcome } from "../../domain/lifecycle.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { parseJsonColumn } from "../authority.ts";

const MAX_ENTRIES = 10_000;

/** A request with everything the gate depends on besides the call itself, as tollgate_gate_facts reads it. */
export interface GateFacts {
  id: string;
  sessionId: string;
  taskId: string;
  status: RunStatus;
  agent: string;
  /** The key asking began the request or one above it: with the key's trust (which can change), its authority over the request. */
  keyAtOrAbove: boolean;
  metadata: unknown;
  config: unknown;
  policyVersion: number;
  defaultTimeoutMs: number | null;
  defaultOnTimeout: TimeoutOutcome;
  defaultRoute: unknown;
  channelVersion: number;
  /** A hash of the facts that can change, checked again behind the lock. */
  fingerprint: string;
  /**
   * The request's webhook address, which never changes: known when this node
   * began the request (undefined otherwise), so that a decision on an
   * approval it opens need not read it (OpenedApprovals).
   */
  resumeUrl?: string | null;
}

export class GateFactsCache {
  // The least recently asked goes first: requests end, and their facts are asked for no more.
  readonly #entries = new LRUCache<string, GateFacts>({ max: MAX_ENTRIES });

  get(workspaceId: string, requestId: string, agentKeyId: string): GateFacts | undefined {
    return this.#entries.get(key(workspaceId, requestId, agentKeyId));
  }

  remember(workspaceId: string, requestId: string, agentKeyId: string, facts: GateFacts): void {
    this.#entries.set(key(workspaceId, requestId, agentKeyId), facts);
  }

  forget(workspaceId: string, requestId: string, agentKeyId: string): void {
    this.#entries.delete(key(workspaceId, requestId, agentKeyId));
  }
}

function key(workspaceId: string, requestId: string, agentKeyId: string): string {
  return `${workspaceId}\n${requestId}\n${agentKeyId}`;
}

/** A row of tollgate_gate_facts. */
export interface GateFactsRow {
  id: string;
  session_id: string;
  task_id: string;
  status: RunStatus;
  agent: string;
  key_at_or_above: boolean;
  metadata: unknown;
  config: unknown;
  policy_version: number;
  default_timeout_ms: number | null;
  default_on_timeout: TimeoutOutcome;
  default_route: unknown;
  channel_version: number;
  fingerprint: string;
}

/** The facts, or null when the request does not exist or the key has no authority over it (server/domain/authority.ts). */
export function gateFactsOf(agent: AgentPrincipal, row: GateFactsRow | undefined): GateFacts | null {
  if (!row || !mayActOn(agent, { agent: row.agent, keyAtOrAbove: row.key_at_or_above })) return null;
  return {
    id: row.id,
    sessionId: row.session_id,
    taskId: row.task_id,
    status: row.status,
    agent: row.agent,
    keyAtOrAbove: row.key_at_or_above,
    metadata: parseJsonColumn(row.metadata),
    config: parseJsonColumn(row.config),
    policyVersion: row.policy_version,
    defaultTimeoutMs: row.default_timeout_ms,
    defaultOnTimeout: row.default_on_timeout,
    defaultRoute: parseJsonColumn(row.default_route),
    channelVersion: row.channel_version,
    fingerprint: row.fingerprint,
  };
}
