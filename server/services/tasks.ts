// Read models for the console: a session's task tree, a request with its call
// chain, and a task's timeline (interaction history and execution trace).
import { notFound } from "../domain/errors.ts";
import { inputSummary } from "../domain/input-summary.ts";
import type { RunStatus } from "../domain/lifecycle.ts";
import type { ServiceDeps } from "./deps.ts";

export interface TreeRequest {
  requestId: string;
  parentRequestId: string | null;
  status: RunStatus;
  pendingApprovals: number;
  createdAt: string;
  endedAt: string | null;
}

export interface TreeNode {
  taskId: string;
  parentTaskId: string | null;
  agent: string;
  kind: "AGENT" | "ORCHESTRATOR";
  /** The agent framework it runs in, when its agent said. */
  framework: string | null;
  status: RunStatus;
  createdAt: string;
  requests: TreeRequest[];
  children: TreeNode[];
}

export async function taskTree(deps: ServiceDeps, workspaceId: string, sessionId: string) {
  const session = await deps.prisma.session.findFirst({ where: { id: sessionId, workspaceId } });
  if (!session) throw notFound("session", sessionId);
  const [tasks, requests] = await Promise.all([
    deps.prisma.task.findMany({ where: { sessionId, workspaceId }, orderBy: { createdAt: "asc" } }),
    deps.prisma.request.findMany({
      where: { sessionId, workspaceId },
      orderBy: { createdAt: "asc" },
      select: { id: true, taskId: true, parentRequestId: true, status: true, pendingApprovals: true, createdAt: true, endedAt: true },
    }),
  ]);
  const nodes = new Map<string, TreeNode>();
  for (const task of tasks) {
    nodes.set(task.id, {
      taskId: task.id,
      parentTaskId: task.parentTaskId,
      agent: task.agent,
      kind: task.kind,
      framework: task.framework,
      status: task.status,
      createdAt: task.createdAt.toISOString(),
      requests: [],
      children: [],
    });
  }
  for (const request of requests) {
    nodes.get(request.taskId)?.requests.push({
      requestId: request.id,
      parentRequestId: request.parentRequestId,
      status: request.status,
      pendingApprovals: request.pendingApprovals,
      createdAt: request.createdAt.toISOString(),
      endedAt: request.endedAt?.toISOString() ?? null,
    });
  }
  const roots: TreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentTaskId ? nodes.get(node.parentTaskId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return {
    session: { id: session.id, title: session.title, status: session.status, createdAt: session.createdAt.toISOString() },
    roots,
  };
}

/** A request and the chain of requests that invoked it, from the client's end down to it. */
export async function requestWithChain(deps: ServiceDeps, workspaceId: string, requestId: string) {
  const request = await deps.prisma.request.findFirst({ where: { id: requestId, workspaceId }, include: { task: true, session: true } });
  if (!request) throw notFound("request", requestId);
  const chain = await deps.prisma.$queryRaw<
    { id: string; taskId: string; agent: string; status: RunStatus; pendingApprovals: number; depth: number; input: unknown }[]
  >`
    WITH RECURSIVE chain AS (
      SELECT id, "parentRequestId", 0 AS depth FROM "Request" WHERE id = ${requestId}
      UNION ALL
      SELECT r.id, r."parentRequestId", chain.depth + 1 FROM "Request" r JOIN chain ON r.id = chain."parentRequestId"
      WHERE chain.depth < 1000
    )
    SELECT r.id, r."taskId", t.agent, r.status, r."pendingApprovals", chain.depth, r.input
    FROM chain JOIN "Request" r USING (id) JOIN "Task" t ON t.id = r."taskId"
    ORDER BY chain.depth DESC`;
  return {
    request: {
      requestId: request.id,
      sessionId: request.sessionId,
      taskId: request.taskId,
      agent: request.task.agent,
      parentRequestId: request.parentRequestId,
      status: request.status,
      pendingApprovals: request.pendingApprovals,
      input: request.input ?? null,
      output: request.output ?? null,
      error: request.error ?? null,
      createdAt: request.createdAt.toISOString(),
      endedAt: request.endedAt?.toISOString() ?? null,
      traceparent: request.traceparent,
    },
    session: { sessionId: request.session.id, title: request.session.title, createdAt: request.session.createdAt.toISOString() },
    chain: chain.map((link) => ({
      requestId: link.id,
      taskId: link.taskId,
      agent: link.agent,
      status: link.status,
      pendingApprovals: Number(link.pendingApprovals),
      // What each level was asked, in one line: the chain shows it beside the agent.
      inputSummary: inputSummary(link.input),
    })),
  };
}

/** A task's events in order: invocations and responses, tool calls, approvals. */
export async function taskTimeline(deps: ServiceDeps, workspaceId: string, taskId: string, limit: number, afterId?: string) {
  const task = await deps.prisma.task.findFirst({ where: { id: taskId, workspaceId } });
  if (!task) throw notFound("task", taskId);
  const events = await deps.prisma.traceEvent.findMany({
    where: { taskId, workspaceId, ...(afterId ? { id: { gt: BigInt(afterId) } } : {}) },
    orderBy: { id: "asc" },
    take: limit,
  });
  return {
    task: { taskId: task.id, agent: task.agent, kind: task.kind, status: task.status, sessionId: task.sessionId, parentTaskId: task.parentTaskId },
    events: events.map((event) => ({
      id: event.id.toString(),
      requestId: event.requestId,
      category: event.category,
      type: event.type,
      name: event.name,
      data: event.data ?? null,
      at: event.createdAt.toISOString(),
    })),
  };
}
