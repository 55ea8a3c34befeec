// The database half of the authority rule (server/domain/authority.ts): whether
// the calling key began a request or task or anything above it, asked in the
// same statement that reads the row, and the reads every agent call goes through.
import { Prisma, type Approval } from "../db/generated/client.ts";
import { mayActOn } from "../domain/authority.ts";
import type { RunStatus } from "../domain/lifecycle.ts";
import type { AgentPrincipal } from "../domain/principal.ts";
import { FUNCTION_APPROVAL_COLUMNS, splitApprovalRow, type ApprovalRow } from "./approvals/approval-row.ts";
import type { DirectSql } from "../db/direct-sql.ts";
import type { ServiceDeps, Tx } from "./deps.ts";

type Db = Tx | ServiceDeps["prisma"];

// The rule's SQL functions (migration 20261125220000_authority_rule_in_one_place), by what they ask about.
const RULE = {
  Request: { check: Prisma.raw("tollgate_key_began_request_or_above"), parent: Prisma.raw(`"parentRequestId"`) },
  Task: { check: Prisma.raw("tollgate_key_began_task_or_above"), parent: Prisma.raw(`"parentTaskId"`) },
} as const;

/**
 * SQL, true when `agentKeyId` began the row `alias` of `table` (a request or a
 * task) or any row above it: its parent, grandparent ... in the call chain
 * (requests) or the task tree (tasks). A null agentKeyId matches no key.
 * The engine's functions ask the same function. `alias` names a row of the
 * surrounding query; it is never user input.
 */
export function keyAtOrAbove(table: keyof typeof RULE, alias: "r" | "t", agentKeyId: string): Prisma.Sql {
  const { check, parent } = RULE[table];
  const row = Prisma.raw(alias);
  return Prisma.sql`${check}(${row}."agentKeyId", ${row}.${parent}, ${agentKeyId})`;
}

export interface RequestRow {
  id: string;
  sessionId: string;
  taskId: string;
  status: RunStatus;
  resumeUrl: string | null;
}

/**
 * A request of the workspace that the agent may act on; null when it does not
 * exist or belongs to work the agent has no authority over (the caller answers
 * both with the same NOT_FOUND). `lockChain` locks the request and every
 * ancestor in id order until commit (step 1 of the lock order in locks.ts) and
 * reads the request behind the lock. A null agent reads any request of the
 * workspace: only for naming a parentRequestId, which any key may do (a call
 * chain crosses services and keys).
 */
export async function findRequest(db: Db, workspaceId: string, requestId: string, agent: AgentPrincipal | null, options: { lockChain: true }): Promise<(RequestRow & { chainTaskIds: string[] }) | null>;
export async function findRequest(db: Db, workspaceId: string, requestId: string, agent: AgentPrincipal | null, options?: { lockChain?: false }): Promise<RequestRow | null>;
export async function findRequest(
  db: Db,
  workspaceId: string,
  requestId: string,
  agent: AgentPrincipal | null,
  options: { lockChain?: boolean } = {},
): Promise<(RequestRow & { chainTaskIds?: string[] }) | null> {
  const authority = agent ? keyAtOrAbove("Request", "r", agent.agentKeyId) : Prisma.sql`true`;
  const rows = await db.$queryRaw<(RequestRow & { agent: string; keyAtOrAbove: boolean })[]>`
    ${
      options.lockChain
        ? Prisma.sql`WITH RECURSIVE chain AS (
            SELECT id, "parentRequestId", 1 AS depth FROM "Request" WHERE id = ${requestId} AND "workspaceId" = ${workspaceId}
            UNION
            SELECT up.id, up."parentRequestId", chain.depth + 1
            FROM "Request" up JOIN chain ON up.id = chain."parentRequestId"
            WHERE chain.depth < 1000
          )`
        : Prisma.empty
    }
    SELECT r.id, r."sessionId", r."taskId", r.status, r."resumeUrl", t.agent, ${authority} AS "keyAtOrAbove"
    FROM "Request" r JOIN "Task" t ON t.id = r."taskId"
    WHERE ${options.lockChain ? Prisma.sql`r.id IN (SELECT id FROM chain)` : Prisma.sql`r.id = ${requestId} AND r."workspaceId" = ${workspaceId}`}
    ${options.lockChain ? Prisma.sql`ORDER BY r.id FOR NO KEY UPDATE OF r` : Prisma.empty}`;
  const row = rows.find((candidate) => candidate.id === requestId);
  if (!row || (agent && !mayActOn(agent, row))) return null;
  const { agent: _agent, keyAtOrAbove: _keyAtOrAbove, ...request } = row;
  return options.lockChain ? { ...request, chainTaskIds: [...new Set(rows.map((link) => link.taskId))] } : request;
}

/** Whether the agent may act on this request of its workspace. */
export async function mayActOnRequest(db: Db, agent: AgentPrincipal, requestId: string): Promise<boolean> {
  return (await findRequest(db, agent.workspaceId, requestId, agent)) !== null;
}

export interface TaskRow {
  id: string;
  sessionId: string;
  agent: string;
  kind: "AGENT" | "ORCHESTRATOR";
  status: RunStatus;
  /** The thread's config and ownership rules (null while it has none). */
  config: unknown;
  ownership: unknown;
}

/**
 * A task of the workspace that the agent may act on, with its thread config;
 * null when it does not exist or the agent has no authority over it. `lock`
 * locks the task row until commit (step 3 of the lock order in locks.ts): a
 * concurrent cancel is seen, and two follow-on requests in the task queue.
 */
export async function findTask(db: Db, agent: AgentPrincipal, taskId: string, options: { lock?: boolean } = {}): Promise<TaskRow | null> {
  const [row] = await db.$queryRaw<(TaskRow & { keyAtOrAbove: boolean })[]>`
    SELECT t.id, t."sessionId", t.agent, t.kind, t.status, c.config, c.ownership, ${keyAtOrAbove("Task", "t", agent.agentKeyId)} AS "keyAtOrAbove"
    FROM "Task" t LEFT JOIN "ThreadConfig" c ON c."taskId" = t.id
    WHERE t.id = ${taskId} AND t."workspaceId" = ${agent.workspaceId}
    ${options.lock ? Prisma.sql`FOR NO KEY UPDATE OF t` : Prisma.empty}`;
  if (!row || !mayActOn(agent, row)) return null;
  const { keyAtOrAbove: _keyAtOrAbove, ...task } = row;
  return { ...task, config: parseJsonColumn(task.config), ownership: parseJsonColumn(task.ownership) };
}

/**
 * An approval the agent may act on (it may act on the approval's request);
 * null otherwise. The authority check and the read are one statement
 * (tollgate_find_approval, which asks the rule's function as keyAtOrAbove does),
 * in `db`'s transaction, or outside any as a prepared direct statement
 * (direct-sql.ts) where nothing else is to be read with it.
 */
export async function findApproval(db: Db | DirectSql, agent: AgentPrincipal, approvalId: string): Promise<Approval | null> {
  const statement = Prisma.sql`
    SELECT ${FUNCTION_APPROVAL_COLUMNS}, f.task_agent AS "taskAgent", f.key_at_or_above AS "keyAtOrAbove"
    FROM tollgate_find_approval(${agent.workspaceId}, ${approvalId}, ${agent.agentKeyId}) f`;
  type Row = ApprovalRow & { taskAgent: string; keyAtOrAbove: boolean };
  const [row] = "$queryRaw" in db ? await db.$queryRaw<Row[]>(statement) : await db.query<Row>(statement);
  if (!row) return null;
  const { approval, extra } = splitApprovalRow(row, ["taskAgent", "keyAtOrAbove"] as const);
  return mayActOn(agent, { agent: extra.taskAgent, keyAtOrAbove: extra.keyAtOrAbove }) ? approval : null;
}

/** Raw queries hand JSON columns back parsed on some drivers and as text on others. */
export function parseJsonColumn(value: unknown): unknown {
  return typeof value === "string" ? (JSON.parse(value) as unknown) : value;
}
