"use client";
// One approval in full: what the agent wants to run and why, the call chain
// waiting on it, the decision controls (for those who may decide), and once it
// is decided, who decided what and when, with proposed vs approved vs executed args.
import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { forwardRef, useEffect, useState } from "react";
import { formatDuration, formatTime, useNow } from "@/lib/format";
import type { AlreadyDecided } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem, DecisionAction } from "@/lib/types";
import { canDecide, useOperator } from "../app-shell";
import { ArgsComparison } from "../args-comparison";
import { FrameworkBadge } from "../framework-badge";
import { AgentMarkdown } from "../markdown";
import { ArgsView } from "../args-view";
import { ACTION_LABEL, ApprovalBadge, ErrorNote, Loading } from "../ui";
import { ApprovalNotifications, describeAsked } from "./approval-notifications";
import { DecisionPanel, type DecisionPanelHandle } from "./decision-panel";
import { clearDrafts, draftsOf } from "./drafts";
import { RequestChain } from "./request-chain";
import { McpToolSection } from "./mcp-tool";
import { RiskFlags } from "./risk-flags";
import { AgentStateAtAsk } from "./agent-state";
import { CancelTask } from "./cancel-task";

const VERB: Record<string, string> = { approve: "approved", edit: "approved with edits", reject: "rejected", respond: "answered" };

function describeLate(notice: AlreadyDecided): string {
  const verb = notice.action ? (VERB[notice.action] ?? notice.action) : "decided";
  return `Already ${verb} by ${notice.decidedBy}${notice.decidedAt ? ` at ${formatTime(notice.decidedAt)}` : ""}. Your decision was not recorded.`;
}

/** What deciding a question or a form means: answering it or declining. */
const ANSWER_LABEL: Record<string, Record<string, string>> = {
  question: { respond: "Answered", reject: "Declined" },
  form: { edit: "Answered", reject: "Declined" },
};

function DecisionBanner({ approval, myEmail }: { approval: ApprovalItem; myEmail: string }) {
  const decision = approval.decision;
  if (approval.status === "PENDING") return null;
  const who = decision ? (decision.decidedBy === myEmail ? `you (${decision.decidedBy})` : decision.decidedBy) : "unknown";
  let headline: string;
  if (approval.status === "EXPIRED") headline = `Expired: no decision in time, so the default applied (${decision?.action === "approve" ? "approved" : "rejected"})`;
  else if (approval.status === "CANCELED") {
    const by = approval.cancellation ? (approval.cancellation.by === myEmail ? `you (${approval.cancellation.by})` : approval.cancellation.by) : who;
    headline = approval.decider === "timeout" ? "Canceled: no decision in time, so the default applied" : `Canceled by ${by}`;
  }
  else if (approval.decider === "policy") headline = `${ACTION_LABEL[decision?.action ?? ""] ?? approval.status} automatically by the rule "${approval.policy?.name ?? decision?.decidedBy}" (version ${approval.policy?.version ?? "?"})`;
  else headline = `${(ANSWER_LABEL[approval.kind] ?? ACTION_LABEL)[decision?.action ?? ""] ?? approval.status} by ${who}`;
  const tone = approval.status === "APPROVED" ? "border-emerald-300 bg-emerald-50 text-emerald-950" : "border-slate-300 bg-slate-100 text-slate-900";
  return (
    <div data-testid="decision-banner" className={`rounded border p-3 text-sm ${tone}`}>
      <p className="font-semibold">{headline}</p>
      <p className="mt-0.5 text-xs">at {formatTime(decision?.decidedAt ?? approval.cancellation?.at)}</p>
      {approval.cancellation?.reason ? (
        <p className="mt-2">
          <span className="font-medium">Reason: </span>
          {approval.cancellation.reason}
        </p>
      ) : null}
      {decision?.message ? (
        <p className="mt-2">
          <span className="font-medium">{decision.action === "respond" ? "Answer: " : "Message: "}</span>
          {decision.message}
        </p>
      ) : null}
    </div>
  );
}

/** Which rule set this approval's gate, and who must decide it. */
function GateSummary({ approval }: { approval: ApprovalItem }) {
  const rule = approval.policy ? (
    <Link href="/policies" className="underline decoration-slate-300 hover:decoration-slate-900">
      rule “{approval.policy.name}” v{approval.policy.version}
    </Link>
  ) : (
    "the workspace default"
  );
  if (approval.decider === "policy") return <>decided by {rule}</>;
  const who = approval.requiredRole === "ADMIN" ? "an admin" : "an approver";
  const quorum = approval.requiredApprovals > 1;
  return (
    <>
      {quorum ? `${approval.requiredApprovals} distinct approvers (${approval.requiredRole === "ADMIN" ? "admins" : "approvers or admins"})` : who}, set by {rule}
      {quorum && approval.status === "PENDING" ? (
        <span className="mt-0.5 block text-xs text-slate-600" data-testid="quorum-progress">
          {approval.votes.length} of {approval.requiredApprovals} approved
          {approval.votes.length ? `: ${approval.votes.map((vote) => vote.decidedBy).join(", ")}` : ""}; any rejection ends it
        </span>
      ) : null}
    </>
  );
}

function Expiry({ approval }: { approval: ApprovalItem }) {
  const now = useNow();
  if (!approval.expiresAt) return <>{approval.status === "PENDING" ? "never (waits for a decision)" : "no timeout was set"}</>;
  const left = new Date(approval.expiresAt).getTime() - now;
  const then = { approve: "then it is APPROVED automatically", reject: "then it is rejected", cancel: "then it is canceled" }[approval.onTimeout];
  if (approval.status !== "PENDING") return <>{formatTime(approval.expiresAt)}</>;
  return (
    <span className={left < 60_000 ? "font-semibold text-red-700" : ""}>
      in {formatDuration(left)} ({formatTime(approval.expiresAt)}); {then}
    </span>
  );
}

const DRAFT_LABEL = { message: "rejection message", answer: "answer", edit: "edited arguments" } as const;

/** Someone else decided while this operator was writing: their draft was not sent, and they are told so. */
function UnsentDraft({ approvalId }: { approvalId: string }) {
  const [drafts, setDrafts] = useState<ReturnType<typeof draftsOf>>({});
  useEffect(() => setDrafts(draftsOf(approvalId)), [approvalId]);
  const fields = Object.keys(drafts) as (keyof typeof DRAFT_LABEL)[];
  if (fields.length === 0) return null;
  return (
    <div role="alert" data-testid="unsent-draft" className="rounded border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950">
      <p className="font-medium">Your draft was not sent: this approval was decided before you sent it.</p>
      {fields.map((field) => (
        <p key={field} className="mt-1 break-words text-xs">
          {DRAFT_LABEL[field]}: <span className="font-mono">{drafts[field]!.slice(0, 300)}</span>
        </p>
      ))}
      <button
        type="button"
        onClick={() => {
          clearDrafts(approvalId);
          setDrafts({});
        }}
        className="mt-2 rounded border border-amber-500 bg-white px-2 py-1 text-xs hover:bg-amber-100"
      >
        Discard draft
      </button>
    </div>
  );
}

/** Nobody waits for this decision: say so before the operator decides, and offer to end the work. */
function NoAgentWaiting({ approval, canCancel }: { approval: ApprovalItem; canCancel: boolean }) {
  return (
    <div role="alert" data-testid="agent-gone" className="space-y-2 rounded border-2 border-amber-500 bg-amber-50 p-3 text-sm text-amber-950">
      <p className="font-semibold">No agent has been waiting since {formatTime(approval.agentSeenAt)}: a decision will be recorded, but nothing may run.</p>
      <p className="text-xs">The agent that asked has stopped asking for this decision (its process may have ended). If it is not coming back, cancel its task to end the paused chain.</p>
      {canCancel ? <CancelTask approval={approval} /> : null}
    </div>
  );
}

/** A durable run's approval with no process waiting: the decision is applied when its agent starts again, so nothing to cancel. */
function ParkedRun({ approval }: { approval: ApprovalItem }) {
  return (
    <div role="status" data-testid="run-parked" className="space-y-1 rounded border border-sky-300 bg-sky-50 p-3 text-sm text-sky-950">
      <p className="font-semibold">Parked: no process is waiting, but the run continues when its agent starts again.</p>
      <p className="text-xs">
        Run <span className="font-mono">{approval.runId}</span> is durable: last seen {formatTime(approval.agentSeenAt)}. A decision made now is applied when the
        run is continued.
      </p>
    </div>
  );
}

const isEmptyArgs = (args: unknown) => args === null || (typeof args === "object" && Object.keys(args as object).length === 0);

/**
 * The calls its agent paused together (one framework turn): each is decided on
 * its own, and the agent resumes once all of them are.
 */
function PausedTogether({ approval }: { approval: ApprovalItem }) {
  const trpc = useTRPC();
  const group = useQuery(trpc.approval.list.queryOptions({ requestId: approval.requestId, batch: approval.batch!, limit: 100 }));
  const items = [...(group.data?.items ?? [])].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
  if (items.length < 2) return null;
  const open = items.filter((item) => item.status === "PENDING").length;
  return (
    <section aria-labelledby="batch-heading" data-testid="paused-together" className="rounded border border-amber-200 bg-amber-50/60 p-3">
      <h3 id="batch-heading" className="text-xs font-semibold uppercase tracking-wide text-amber-900">
        Paused together: {items.length} calls
      </h3>
      <p className="mt-0.5 text-xs text-amber-900">
        {open > 0 ? `The agent resumes once all are decided; ${open} still ${open === 1 ? "waits" : "wait"}.` : "All decided: the agent resumes with every decision."}
      </p>
      <ol className="mt-2 space-y-1 text-sm">
        {items.map((item, index) => (
          <li key={item.approvalId} className="flex min-w-0 items-center gap-2">
            <span className="w-5 shrink-0 text-right text-xs text-slate-500">{index + 1}.</span>
            {item.approvalId === approval.approvalId ? (
              <span className="min-w-0 truncate font-mono font-semibold" aria-current="true">
                {item.tool} (this one)
              </span>
            ) : (
              <Link href={`/?approval=${item.approvalId}`} className="min-w-0 truncate font-mono underline decoration-slate-300 hover:decoration-slate-900">
                {item.tool}
              </Link>
            )}
            <ApprovalBadge approval={item} />
          </li>
        ))}
      </ol>
    </section>
  );
}

export const ApprovalDetail = forwardRef<
  DecisionPanelHandle,
  { approvalId: string; placeholder?: ApprovalItem; sessionLabel?(sessionId: string): string; onDecided?(action: DecisionAction): void }
>(function ApprovalDetail({ approvalId, placeholder, sessionLabel, onDecided }, ref) {
  const trpc = useTRPC();
  const operator = useOperator();
  const now = useNow();
  const [late, setLate] = useState<AlreadyDecided | null>(null);
  const query = useQuery({
    ...trpc.approval.get.queryOptions({ approvalId }),
    placeholderData: placeholder ?? keepPreviousData,
    // Whether an agent still waits changes without an event: look again while it is pending.
    refetchInterval: (current) => (current.state.data?.status === "PENDING" ? 5_000 : false),
  });
  const approval = query.data?.approvalId === approvalId ? query.data : undefined;

  if (!approval) {
    if (query.error) return <ErrorNote title={`Could not load approval ${approvalId}`} error={query.error} />;
    return <Loading>Loading approval…</Loading>;
  }
  const pending = approval.status === "PENDING";
  const showComparison = !pending && (approval.decision?.action === "edit" || approval.executedAt !== null);

  // What is asked sits above the decision controls, whole: no inner scroll box
  // hides part of a statement while the Approve button is in view.
  const argsSection = (
    <section aria-labelledby="args-heading">
      <h3 id="args-heading" className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">
        {showComparison ? "Arguments: proposed, approved, executed" : "Proposed arguments"}
      </h3>
      {showComparison ? (
        <ArgsComparison proposed={approval.args} approved={approval.approvedArgs} executed={approval.executedArgs} executedAt={approval.executedAt} />
      ) : (
        <ArgsView
          value={approval.args}
          label="Proposed arguments as JSON"
          risks={approval.risk.flags.flatMap((flag) => (flag.path ? [{ path: flag.path, label: flag.label, ...(flag.match ? { match: flag.match } : {}) }] : []))}
        />
      )}
    </section>
  );

  return (
    <article aria-label={`Approval ${approval.tool} by ${approval.agent}`} className="flex min-h-full flex-col gap-4">
      <header className="space-y-1">
        <div className="flex items-center gap-2">
          {approval.kind !== "tool" ? (
            <span data-testid={`${approval.kind}-kind`} className="shrink-0 rounded bg-indigo-100 px-1.5 py-0.5 text-[11px] font-semibold uppercase text-indigo-900">
              {approval.kind}
            </span>
          ) : null}
          <h2 className="font-mono text-lg font-semibold break-all">{approval.tool}</h2>
          <ApprovalBadge approval={approval} />
        </div>
        <p className="flex flex-wrap items-center gap-x-1 text-sm text-slate-600">
          {approval.kind === "tool" ? "requested by" : "asked by"} <span className="font-medium text-slate-900">{approval.agent}</span>
          <FrameworkBadge framework={approval.framework} />
          {pending ? <span>· waiting {formatDuration(now - new Date(approval.createdAt).getTime())}</span> : null}
          {pending && approval.expiresAt ? (
            <span>
              · expires <Expiry approval={approval} />
            </span>
          ) : null}
        </p>
      </header>

      {late ? (
        <p role="alert" data-testid="late-decision" className="rounded border border-amber-400 bg-amber-50 p-3 text-sm font-medium text-amber-950">
          {describeLate(late)}
        </p>
      ) : null}
      <DecisionBanner approval={approval} myEmail={operator.email} />
      {!pending ? <UnsentDraft approvalId={approval.approvalId} /> : null}
      {approval.agentWaiting === "gone" ? <NoAgentWaiting approval={approval} canCancel={canDecide(operator)} /> : null}
      {approval.agentWaiting === "parked" ? <ParkedRun approval={approval} /> : null}
      {approval.notRunReason ? (
        <p role="alert" data-testid="not-run" className="rounded border-2 border-amber-500 bg-amber-50 p-3 text-sm font-semibold text-amber-950">
          This call did not run. <span className="font-normal">Its agent reports: {approval.notRunReason}</span>
        </p>
      ) : null}
      {approval.executionUnknown ? (
        <p role="alert" data-testid="execution-unknown" className="rounded border-2 border-red-500 bg-red-50 p-3 text-sm font-semibold text-red-900">
          Claimed by a process that stopped ({formatTime(approval.executionClaimedAt!)}); outcome unknown. The tool may or may not have run, and it is not run
          again automatically.
        </p>
      ) : null}
      {approval.executionDeviated ? (
        <p role="alert" data-testid="execution-deviation" className="rounded border-2 border-red-500 bg-red-50 p-3 text-sm font-semibold text-red-900">
          The agent ran this tool with arguments other than those approved
          {approval.executedAt ? ` (reported ${formatTime(approval.executedAt)})` : ""}. Compare them below.
        </p>
      ) : null}

      <section aria-labelledby="chain-heading">
        <h3 id="chain-heading" className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">
          Call chain
        </h3>
        <RequestChain requestId={approval.requestId} sessionId={approval.sessionId} pending={pending} />
      </section>

      {approval.summary ? (
        <section aria-labelledby="summary-heading" className="rounded border border-slate-200 bg-white p-3">
          <h3 id="summary-heading" className="text-xs font-semibold uppercase tracking-wide text-slate-500">
            Summary by the agent
          </h3>
          <div className="mt-1" data-testid="summary">
            <AgentMarkdown text={approval.summary} />
          </div>
        </section>
      ) : null}

      {approval.reason || !approval.summary ? (
        <section aria-labelledby="reason-heading">
          <h3 id="reason-heading" className="text-xs font-semibold uppercase tracking-wide text-slate-500">
            Reason
          </h3>
          <div className="mt-1" data-testid="reason">
            {approval.reason ? <AgentMarkdown text={approval.reason} /> : <p className="text-sm text-slate-400">The agent gave no reason.</p>}
          </div>
        </section>
      ) : null}

      {approval.batch ? <PausedTogether approval={approval} /> : null}

      {approval.kind === "tool" ? <RiskFlags approval={approval} /> : null}
      {approval.mcpTool ? <McpToolSection approval={approval} tool={approval.mcpTool} /> : null}
      <AgentStateAtAsk approval={approval} />
      {approval.kind !== "tool" && isEmptyArgs(approval.args) ? null : argsSection}


      <section aria-labelledby="details-heading">
        <h3 id="details-heading" className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">
          Details
        </h3>
        <dl className="grid grid-cols-[6.5rem_minmax(0,1fr)] gap-x-3 sm:grid-cols-[8rem_minmax(0,1fr)] gap-y-1 text-sm">
          <dt className="text-slate-500">Session</dt>
          <dd className="min-w-0 break-all">
            <Link href={`/sessions/${approval.sessionId}?task=${approval.taskId}`} className="underline decoration-slate-300 hover:decoration-slate-900">
              {sessionLabel?.(approval.sessionId) || approval.sessionTitle || "Untitled session"}
            </Link>
          </dd>
          <dt className="text-slate-500">Requested</dt>
          <dd>{formatTime(approval.createdAt)}</dd>
          <dt className="text-slate-500">Expires</dt>
          <dd>
            <Expiry approval={approval} />
          </dd>
          <dt className="text-slate-500">Gate</dt>
          <dd data-testid="gate">
            <GateSummary approval={approval} />
          </dd>
          {approval.decider !== "policy" ? (
            <>
              <dt className="text-slate-500">Asked</dt>
              <dd data-testid="asked">{describeAsked(approval.asked, approval.askedOfYou)}</dd>
            </>
          ) : null}
          <dt className="text-slate-500">Approval</dt>
          <dd className="font-mono text-xs leading-5">{approval.approvalId}</dd>
          {approval.externalId ? (
            <>
              <dt className="text-slate-500">Framework id</dt>
              <dd className="font-mono text-xs leading-5 break-all" data-testid="external-id">
                {approval.externalId}
              </dd>
            </>
          ) : null}
        </dl>
      </section>

      {approval.decider !== "policy" ? <ApprovalNotifications approvalId={approval.approvalId} /> : null}

      {/* Last, and at the foot of the pane however short the page: every approval's
          decision bar is in the same place, and nothing that appears above it moves it. */}
      {pending && canDecide(operator) ? (
        <DecisionPanel key={approval.approvalId} ref={ref} approval={approval} myEmail={operator.email} myRole={operator.role} onLateDecision={setLate} onDecided={(action) => onDecided?.(action)} />
      ) : pending ? (
        <p className="rounded border border-slate-200 bg-slate-100 p-2 text-sm text-slate-700">
          You have the viewer role: you can follow approvals but not decide them.
        </p>
      ) : null}

    </article>
  );
});
