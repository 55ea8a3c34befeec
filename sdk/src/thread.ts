// The agent's handle on its task's thread for one request: config lookups,
// state with explicit or implicit saving, memory writes, continuity (restore
// or reference) and context assembly.
import { randomUUID } from "node:crypto";
import canonicalize from "canonicalize";
import type { AssembledContext, Json, Procedure, ProcedureInput, ProcedureOutput, ToolCallRecord } from "./contract.ts";
import { getConfigValue, isToolEnabled, stripAgentKeys, type OwnershipRules, type StateObject, type ThreadConfig } from "./thread-rules.ts";

export type SavingStrategy = "explicit" | "implicit";
export type ContinuityStrategy = "restore" | "reference";
export type { AssembledContext, ThreadConfig, OwnershipRules, StateObject, ToolCallRecord };

/** Equal JSON values give equal text (RFC 8785), so a snapshot compares by string. */
const canonicalJson = (value: unknown): string => canonicalize(value) ?? "null";

/** Where the handle writes what the agent should know; `console` fits. */
export interface ThreadLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface ThreadOptions {
  /** explicit (default): only save() persists. implicit: a changed state is saved at the end of the request. */
  saving?: SavingStrategy;
  /** restore: tool calls are recorded and handed back next time. reference: one conversation id, reused. */
  continuity?: ContinuityStrategy;
  /** restore: how many tool calls to keep (else the thread config's keepToolCalls, else 20). */
  keepToolCalls?: number;
  log?: ThreadLog;
}

export interface ThreadTransport {
  call<P extends Procedure>(path: P, input: ProcedureInput<P>): Promise<ProcedureOutput<P>>;
  withRetry<T>(call: () => Promise<T>): Promise<T>;
}

export type EndResult =
  | { saved: true; version: number }
  | { saved: false; version: number; reason: "explicit" | "not-loaded" | "unchanged" | "null-state" };

export interface ContextOptions {
  lookups?: string[];
  recentTurns?: number;
  inactivityWindowMs?: number;
  lookupLimit?: number;
}

// "Says so once": the explicit-mode notice is written once per log, not once per request.
const toldExplicit = new WeakSet<ThreadLog>();

export class Thread {
  readonly taskId: string;
  readonly requestId: string;
  readonly saving: SavingStrategy;
  readonly continuity: ContinuityStrategy | undefined;
  /** The version the handle last loaded or saved; 0 before the first save. */
  version = 0;
  config: ThreadConfig | null = null;
  ownership: OwnershipRules | null = null;
  /**
   * The state to work on. In implicit mode mutate it (or replace it): what
   * differs from the loaded snapshot at the end of the request is saved.
   */
  state: StateObject | null = null;

  private readonly transport: ThreadTransport;
  private readonly log: ThreadLog;
  private readonly keepToolCalls: number | undefined;
  private loaded = false;
  /** Canonical JSON of the persisted part of the state as last loaded or saved. */
  private snapshot: string | null = null;
  private conversation: string | null = null;
  private contextCache: { key: string; value: AssembledContext } | null = null;
  private ended: Promise<EndResult> | null = null;

  constructor(transport: ThreadTransport, taskId: string, requestId: string, options: ThreadOptions = {}) {
    this.transport = transport;
    this.taskId = taskId;
    this.requestId = requestId;
    this.saving = options.saving ?? "explicit";
    this.continuity = options.continuity;
    this.keepToolCalls = options.keepToolCalls;
    this.log = options.log ?? console;
  }

  /** Calls the server, retrying what failed on the network. */
  private call<P extends Procedure>(path: P, input: ProcedureInput<P>): Promise<ProcedureOutput<P>> {
    return this.transport.withRetry(() => this.transport.call(path, input));
  }

  // ---- Config ----------------------------------------------------------------

  /** Replaces the thread's config (and ownership rules when given); drops any cached context. */
  async configure(config: ThreadConfig, ownership?: OwnershipRules | null): Promise<void> {
    await this.call("thread.configure", { taskId: this.taskId, config, ...(ownership === undefined ? {} : { ownership }) });
    this.config = config;
    if (ownership !== undefined) this.ownership = ownership;
    this.contextCache = null;
  }

  /** Is the tool listed in the config's enabledTools? False without a config or list (after load() or configure()). */
  isToolEnabled(tool: string): boolean {
    return isToolEnabled(this.config, tool);
  }

  /** A top-level config value (after load() or configure()). */
  getConfigValue<T = unknown>(key: string): T | undefined {
    return getConfigValue(this.config, key) as T | undefined;
  }

  // ---- State -----------------------------------------------------------------

  /**
   * Loads config and state. The returned object is the handle's own deep copy
   * (`thread.state`); in implicit mode it is also the snapshot compared at the end.
   */
  async load(): Promise<StateObject> {
    const loaded = await this.call("state.load", { taskId: this.taskId });
    this.version = loaded.version;
    this.config = loaded.config as ThreadConfig | null;
    this.ownership = loaded.ownership as OwnershipRules | null;
    this.state = structuredClone(loaded.state ?? {});
    this.snapshot = this.persisted(this.state);
    this.loaded = true;
    return this.state;
  }

  /**
   * Saves `state` (default: thread.state) as the next version, based on the
   * version this handle last saw, without its AGENT-owned keys (request
   * scratch is never persisted). Updates the cache and snapshot, so the end of
   * the request does not save it again.
   */
  async save(state: StateObject | null = this.state): Promise<{ version: number; unchanged: boolean }> {
    if (state === null || typeof state !== "object" || Array.isArray(state)) {
      throw new Error(`thread ${this.taskId}: save() needs a state object; to clear the state save {}`);
    }
    const persisted = stripAgentKeys(this.ownership, state);
    const saved = await this.call("state.save", {
      taskId: this.taskId,
      requestId: this.requestId,
      state: persisted,
      ...(this.loaded ? { baseVersion: this.version } : {}),
    });
    this.version = saved.version;
    this.state = state;
    this.snapshot = this.persisted(state);
    this.loaded = true;
    return { version: saved.version, unchanged: saved.unchanged };
  }

  /** Sets MEMORY-owned keys (null removes one) through the memory API; the cached state follows. */
  async remember(memory: Record<string, unknown>): Promise<{ version: number }> {
    const saved = await this.call("state.remember", {
      taskId: this.taskId,
      requestId: this.requestId,
      memory: memory as Record<string, Json>,
      ...(this.loaded ? { baseVersion: this.version } : {}),
    });
    this.version = saved.version;
    const apply = (target: StateObject) => {
      for (const [key, value] of Object.entries(memory)) {
        if (value === null || value === undefined) delete target[key];
        else target[key] = structuredClone(value);
      }
    };
    if (this.loaded && this.snapshot !== null) {
      const snapshot = JSON.parse(this.snapshot) as StateObject;
      apply(snapshot);
      this.snapshot = canonicalJson(snapshot);
    }
    if (this.state) apply(this.state);
    return { version: saved.version };
  }

  /**
   * The end-of-request hook. explicit: saves nothing (and says so once in the
   * log). implicit: saves the state if it changed since load or the last save;
   * a state set to null is not saved, with a warning. Runs once.
   */
  end(): Promise<EndResult> {
    this.ended ??= this.finish();
    return this.ended;
  }

  private async finish(): Promise<EndResult> {
    if (this.saving === "explicit") {
      if (!toldExplicit.has(this.log)) {
        toldExplicit.add(this.log);
        this.log.info(
          `tollgate thread ${this.taskId}: saving is explicit, so the end of a request saves nothing; call thread.save() to persist state (or use saving: "implicit")`,
        );
      }
      return { saved: false, version: this.version, reason: "explicit" };
    }
    if (!this.loaded) return { saved: false, version: this.version, reason: "not-loaded" };
    if (this.state === null || this.state === undefined) {
      this.log.warn(
        `tollgate thread ${this.taskId}: the state was set to null in request ${this.requestId}, so it was not saved (version ${this.version} stays); to clear the state, save {}`,
      );
      return { saved: false, version: this.version, reason: "null-state" };
    }
    if (this.persisted(this.state) === this.snapshot) return { saved: false, version: this.version, reason: "unchanged" };
    const saved = await this.save(this.state);
    return { saved: true, version: saved.version };
  }

  private persisted(state: StateObject): string {
    return canonicalJson(stripAgentKeys(this.ownership, state));
  }

  // ---- Continuity ------------------------------------------------------------

  /**
   * What continuity hands this request: restore, the kept tool calls of earlier
   * requests (oldest first); reference, the agent's conversation id (created on
   * the first request, the same one on every later request).
   */
  async start(): Promise<{ state: StateObject; toolCalls: ToolCallRecord[]; conversationId: string | null }> {
    const state = await this.load();
    const toolCalls = this.continuity === "restore" ? await this.restore() : [];
    const conversationId = this.continuity === "reference" ? await this.conversationId() : null;
    return { state, toolCalls, conversationId };
  }

  /** restore: the tool calls and results of earlier requests of this task, oldest first. */
  async restore(): Promise<ToolCallRecord[]> {
    const stored = await this.call("continuity.load", { taskId: this.taskId, requestId: this.requestId });
    return (stored.strategy === "restore" ? stored.toolCalls : []) as ToolCallRecord[];
  }

  /** reference: the agent's own conversation id; pass yours on the first request to have it kept. */
  async conversationId(yours?: string): Promise<string> {
    if (this.conversation) return this.conversation;
    const recorded = await this.call("continuity.record", { strategy: "reference", taskId: this.taskId, requestId: this.requestId, conversationId: yours });
    this.conversation = recorded.strategy === "reference" ? recorded.conversationId : null;
    return this.conversation!;
  }

  /**
   * Records one tool call and its result: in the task's trace (recent tool
   * outputs of context assembly read it) and, for restore, in continuity.
   */
  async recordToolCall(call: { tool: string; args?: unknown; result?: unknown; callId?: string }): Promise<{ callId: string }> {
    const callId = call.callId ?? `call_${randomUUID()}`;
    const traced = this.call("request.trace", {
      requestId: this.requestId,
      events: [{ type: "tool_call", name: call.tool, data: { callId, args: call.args ?? null, result: call.result ?? null } as Json }],
    });
    const recorded =
      this.continuity === "restore"
        ? this.call("continuity.record", {
            strategy: "restore",
            taskId: this.taskId,
            requestId: this.requestId,
            toolCalls: [{ callId, tool: call.tool, args: (call.args ?? null) as Json, ...(call.result === undefined ? {} : { result: call.result as Json }) }],
            keepLast: this.keepToolCalls,
          })
        : null;
    await Promise.all([traced, recorded]);
    this.contextCache = null;
    return { callId };
  }

  // ---- Context ---------------------------------------------------------------

  /** Marks entities active in the thread now: the explicit, authoritative part of its context. */
  async touch(entities: { id: string; name: string; type?: string; data?: unknown }[]): Promise<void> {
    await this.call("context.touch", { taskId: this.taskId, requestId: this.requestId, entities: entities as { id: string; name: string; type?: string; data?: Json }[] });
    this.contextCache = null;
  }

  /**
   * The context for this request, with its size in bytes: active entities,
   * then the last few tool turns, then fuzzy lookups by name. Cached for the
   * same options until the config, the entities or the tool calls change.
   */
  async context(options: ContextOptions & { refresh?: boolean } = {}): Promise<AssembledContext> {
    const { refresh, ...input } = options;
    const key = canonicalJson(input);
    if (!refresh && this.contextCache?.key === key) return this.contextCache.value;
    const value = await this.call("context.assemble", { taskId: this.taskId, ...input });
    this.contextCache = { key, value };
    return value;
  }
}
