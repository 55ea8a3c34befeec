"use client";
// One rule in the list: what it matches, what it does, where it came from,
// and (for admins) edit, enable or disable, and delete after a confirmation.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { formatTime } from "@/lib/format";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import type { PolicyItem } from "@/lib/types";
import { describeMatch, describeOutcome } from "./describe";
import { describeRoute } from "../notifications/describe-route";
import { LAST_PRIORITY } from "@/server/domain/policy-terms";

const OUTCOME_BADGE = {
  approve: { label: "Auto-approve", className: "bg-emerald-100 text-emerald-900 ring-emerald-300" },
  reject: { label: "Auto-reject", className: "bg-red-100 text-red-900 ring-red-300" },
  require: { label: "Person decides", className: "bg-amber-100 text-amber-900 ring-amber-300" },
} as const;

const badge = "inline-flex shrink-0 items-center rounded px-1.5 py-0.5 text-[11px] font-semibold uppercase tracking-wide ring-1 ring-inset";
const small = "rounded border px-2 py-1 text-xs disabled:opacity-50";

export function RuleCard({ rule, position, canEdit, onEdit }: { rule: PolicyItem; position: number; canEdit: boolean; onEdit(): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const onSettled = () => queryClient.invalidateQueries({ queryKey: trpc.policy.pathKey() });
  const toggle = useMutation(trpc.policy.update.mutationOptions({ onSettled }));
  const remove = useMutation(trpc.policy.delete.mutationOptions({ onSettled }));
  const expired = rule.expiresAt !== null && new Date(rule.expiresAt).getTime() <= Date.now();
  const outcome = OUTCOME_BADGE[rule.outcome];
  const failure = toggle.error ?? remove.error;

  return (
    <li>
      <article aria-label={`Rule ${rule.name}`} id={rule.policyId} className={`rounded border bg-white p-3 ${rule.enabled && !expired ? "border-slate-200" : "border-dashed border-slate-300 bg-slate-50"}`}>
        <div className="grid grid-cols-[1.5rem_minmax(0,1fr)] items-start gap-x-3 gap-y-2 sm:grid-cols-[1.5rem_minmax(0,1fr)_auto]">
          <span className="pt-0.5 text-right text-xs tabular-nums text-slate-500" title={`Evaluated in position ${position}`}>
            {position}.
          </span>
          <div className="min-w-0 space-y-1">
            <div className="flex flex-wrap items-center gap-2">
              <h3 className={`break-words font-medium ${rule.enabled ? "" : "text-slate-500"}`}>{rule.name}</h3>
              <span className={`${badge} ${outcome.className}`}>{outcome.label}</span>
              {!rule.enabled ? <span className={`${badge} bg-slate-200 text-slate-700 ring-slate-300`}>Disabled</span> : null}
              {expired ? <span className={`${badge} bg-orange-100 text-orange-900 ring-orange-300`}>Expired</span> : null}
              {rule.remembered ? <span className={`${badge} bg-violet-100 text-violet-900 ring-violet-300`}>Remembered</span> : null}
            </div>
            {rule.description ? <p className="text-sm text-slate-600">{rule.description}</p> : null}
            <p className="text-sm">
              <span className="text-slate-500">Matches </span>
              {describeMatch(rule.match).map((part, index) => (
                <span key={index}>
                  {index ? <span className="text-slate-400">, </span> : null}
                  <code className="break-words rounded bg-slate-100 px-1 font-mono text-xs">{part}</code>
                </span>
              ))}
            </p>
            {rule.matchRewrittenFrom ? <RewrittenNote from={rule.matchRewrittenFrom} match={rule.match} /> : null}
            <p className="text-sm" data-testid="rule-outcome">
              {describeOutcome(rule)}
            </p>
            {rule.route ? (
              <p className="text-xs text-slate-700" data-testid="rule-route">
                Routing: {describeRoute(rule.route)}
              </p>
            ) : null}
            <p className="text-xs text-slate-500">
              Version {rule.version} · {rule.priority >= LAST_PRIORITY ? "after all written rules" : `priority ${rule.priority}`} · by {rule.createdBy}
              {rule.remembered && rule.sourceApprovalId ? (
                <>
                  {" "}
                  · remembered from approval{" "}
                  <Link href={`/approvals/${rule.sourceApprovalId}`} className="font-mono underline decoration-slate-300 hover:decoration-slate-900">
                    {rule.sourceApprovalId}
                  </Link>
                </>
              ) : null}
              {rule.expiresAt ? ` · ${expired ? "expired" : "expires"} ${formatTime(rule.expiresAt)}` : rule.remembered ? " · no expiry" : ""}
            </p>
          </div>
          {canEdit ? (
            <div className="col-start-2 flex flex-wrap gap-1.5 sm:col-start-auto">
              <button type="button" onClick={onEdit} aria-label={`Edit ${rule.name}`} className={`${small} border-slate-300 bg-white hover:bg-slate-100`}>
                Edit
              </button>
              <button
                type="button"
                disabled={toggle.isPending}
                aria-label={`${rule.enabled ? "Disable" : "Enable"} ${rule.name}`}
                onClick={() => toggle.mutate({ policyId: rule.policyId, enabled: !rule.enabled })}
                className={`${small} border-slate-300 bg-white hover:bg-slate-100`}
              >
                {rule.enabled ? "Disable" : "Enable"}
              </button>
              <button type="button" aria-label={`Delete ${rule.name}`} aria-expanded={confirming} onClick={() => setConfirming(true)} className={`${small} border-red-300 bg-white text-red-800 hover:bg-red-50`}>
                Delete
              </button>
            </div>
          ) : null}
        </div>
        {confirming ? (
          <div role="alertdialog" aria-label={`Delete ${rule.name}?`} className="mt-2 flex flex-wrap items-center gap-2 rounded border border-red-200 bg-red-50 p-2 text-sm text-red-900">
            <span>Delete “{rule.name}”? Calls it matched fall through to the next rule or the workspace default.</span>
            <button
              type="button"
              autoFocus
              disabled={remove.isPending}
              onClick={() => remove.mutate({ policyId: rule.policyId })}
              className="rounded bg-red-700 px-2 py-1 text-xs font-medium text-white hover:bg-red-800 disabled:opacity-50"
            >
              {remove.isPending ? "Deleting…" : "Delete rule"}
            </button>
            <button type="button" onClick={() => setConfirming(false)} className="rounded px-2 py-1 text-xs hover:bg-red-100">
              Keep it
            </button>
          </div>
        ) : null}
        {failure ? (
          <p role="alert" className="mt-2 text-sm text-red-700">
            Not changed: {errorMessage(failure)}
          </p>
        ) : null}
      </article>
    </li>
  );
}

/**
 * A rule whose globs were rewritten when names began to be compared case- and
 * width-insensitively: it now matches names it did not (and the admin should
 * check it still means what it was written for). Gone once the rule is saved.
 */
function RewrittenNote({ from, match }: { from: { agent?: string; tool?: string }; match: { agent?: string; tool?: string } }) {
  const changes = (["tool", "agent"] as const).filter((field) => from[field] !== undefined);
  return (
    <p role="note" data-testid="rule-rewritten" className="rounded border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-950">
      Now matches differently: names are compared ignoring case and width, so{" "}
      {changes.map((field, index) => (
        <span key={field}>
          {index ? " and " : null}
          {field} <code className="break-words rounded bg-white/70 px-1 font-mono">{from[field]}</code> became{" "}
          <code className="break-words rounded bg-white/70 px-1 font-mono">{match[field]}</code>
        </span>
      ))}
      , which also matches {changes.length > 1 ? "their" : "its"} upper-case, fullwidth and accented forms. Save the rule to confirm it.
    </p>
  );
}
