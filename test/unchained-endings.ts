// Endings for tollgate_finish_approvals_if_unchanged, for tests that call the
// SQL directly: each approves its approval, and their audit entries follow
// seq `afterSeq` but are chained to no real entry (prevHash "p"), so a batch
// of them is refused as 'contended' once it holds every lock.
export function unchainedEndings(workspaceId: string, approvalIds: string[], afterSeq: number): string {
  const ending = { status: "APPROVED", decisionAction: "approve", decisionMessage: null, approvedArgs: {}, decidedBy: "t", decidedById: null, deciderKind: "operator", receipt: null };
  return JSON.stringify(
    approvalIds.map((id, index) => ({
      approvalId: id,
      ending,
      delivery: null,
      trace: {},
      audit: { workspaceId, seq: afterSeq + 1 + index, actorType: "system", actorId: "t", actorLabel: "t", action: "approval.decided", subjectType: "approval", subjectId: id, data: null, prevHash: "p", hash: `h${index}`, macVersion: 1, createdAt: new Date() },
      now: new Date(),
    })),
  );
}
