// Escalation and the reminder before expiry: when nobody decided in time, the
// route's next step is asked (recorded on the approval and in the audit log)
// and announced; an approval about to expire is announced once more. Each
// step is a conditional write on the approval, so on several nodes it is
// taken once, and a decision racing it either wins or finds the step taken.
import type { Approval } from "../../db/generated/client.ts";
import { askOf, escalationDueAt, type Route } from "../../domain/routing.ts";
import { SYSTEM_ACTOR } from "../audit.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";
import { announce } from "./announce.ts";

/** Takes the escalation steps and reminders that are due. Returns how many were taken. */
export async function escalateDueApprovals(deps: ServiceDeps, limit = 100): Promise<number> {
  const now = deps.now();
  const due = await deps.prisma.approval.findMany({
    where: { status: "PENDING", OR: [{ escalateAt: { lte: now } }, { remindAt: { lte: now } }] },
    take: limit,
  });
  let taken = 0;
  const announcedIn = new Set<string>();
  for (const approval of due) {
    const escalated = approval.escalateAt !== null && approval.escalateAt <= now && (await escalate(deps, approval, now));
    const reminded = approval.remindAt !== null && approval.remindAt <= now && (await remind(deps, approval, now));
    taken += Number(escalated) + Number(reminded);
    if (escalated || reminded) announcedIn.add(approval.workspaceId);
  }
  for (const workspaceId of announcedIn) deps.bus.publish("notification:queued", { workspaceId });
  return taken;
}

async function escalate(deps: ServiceDeps, approval: Approval, now: Date): Promise<boolean> {
  const route = approval.route as Route | null;
  const step = route?.escalate?.[approval.escalationLevel];
  const level = approval.escalationLevel + 1;
  return transact(deps, async (tx) => {
    const ask = askOf(step?.to, approval.requiredRole === "ADMIN" ? "ADMIN" : "OPERATOR");
    const taken = await tx.approval.updateMany({
      where: { id: approval.id, status: "PENDING", escalationLevel: approval.escalationLevel },
      data: {
        escalationLevel: level,
        escalateAt: escalationDueAt(route, approval.createdAt, level),
        ...(step ? { askedRole: ask.role, askedOperators: ask.operators, askedGroup: ask.group } : {}),
      },
    });
    if (taken.count === 0 || !step) return false;
    const { channelVersion } = await tx.workspace.findUniqueOrThrow({ where: { id: approval.workspaceId }, select: { channelVersion: true } });
    await announce(deps, tx, { workspaceId: approval.workspaceId, approvalId: approval.id, reason: "ESCALATED", level, channels: step.channels ?? route?.channels, channelVersion }, now);
    await deps.audit.append(
      tx,
      approval.workspaceId,
      { actor: SYSTEM_ACTOR, action: "approval.escalated", subjectType: "approval", subjectId: approval.id, data: { level, afterSeconds: step.afterSeconds, askedOf: ask } },
      now,
    );
    return true;
  });
}

async function remind(deps: ServiceDeps, approval: Approval, now: Date): Promise<boolean> {
  const route = approval.route as Route | null;
  return transact(deps, async (tx) => {
    const taken = await tx.approval.updateMany({ where: { id: approval.id, status: "PENDING", remindAt: approval.remindAt }, data: { remindAt: null } });
    if (taken.count === 0) return false;
    const { channelVersion } = await tx.workspace.findUniqueOrThrow({ where: { id: approval.workspaceId }, select: { channelVersion: true } });
    await announce(deps, tx, { workspaceId: approval.workspaceId, approvalId: approval.id, reason: "EXPIRING", level: 0, channels: route?.channels, channelVersion }, now);
    await deps.audit.append(
      tx,
      approval.workspaceId,
      { actor: SYSTEM_ACTOR, action: "approval.reminded", subjectType: "approval", subjectId: approval.id, data: { expiresAt: approval.expiresAt?.toISOString() ?? null } },
      now,
    );
    return true;
  });
}

/** The earliest escalation or reminder among pending approvals. */
export async function nextEscalation(deps: ServiceDeps): Promise<Date | null> {
  const [escalation, reminder] = await Promise.all([
    deps.prisma.approval.findFirst({ where: { status: "PENDING", escalateAt: { not: null } }, orderBy: { escalateAt: "asc" }, select: { escalateAt: true } }),
    deps.prisma.approval.findFirst({ where: { status: "PENDING", remindAt: { not: null } }, orderBy: { remindAt: "asc" }, select: { remindAt: true } }),
  ]);
  const times = [escalation?.escalateAt, reminder?.remindAt].filter((at): at is Date => at instanceof Date);
  return times.length ? new Date(Math.min(...times.map((at) => at.getTime()))) : null;
}
