"use client";
// The Policies page: the rules in evaluation order, the editor, the workspace
// default gate and the dry run. Everyone may read and dry-run; admins change rules.
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useState } from "react";
import { useTRPC } from "@/lib/trpc";
import type { PolicyItem } from "@/lib/types";
import { useOperator } from "../app-shell";
import { Empty, ErrorNote, Loading } from "../ui";
import { DefaultGate } from "./default-gate";
import { DryRun } from "./dry-run";
import { NameSettings } from "./name-settings";
import { RuleCard } from "./rule-card";
import { StarterRules } from "./starter-rules";

/**
 * The editor checks a rule as the server will (the rule compiler, with its
 * RE2 engine: most of this page's script), so it is loaded when an admin
 * opens it, not with the list every operator reads.
 */
const RuleEditor = dynamic(() => import("./rule-editor").then((module) => module.RuleEditor), { ssr: false, loading: () => <Loading>Loading the rule editor…</Loading> });

type Editing = { rule: PolicyItem | null } | null;

export function PoliciesPage() {
  const trpc = useTRPC();
  const operator = useOperator();
  const isAdmin = operator.role === "ADMIN";
  const rules = useQuery(trpc.policy.list.queryOptions());
  const [editing, setEditing] = useState<Editing>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const open = (rule: PolicyItem | null) => {
    setNotice(null);
    setEditing({ rule });
    window.scrollTo({ top: 0 });
  };

  return (
    <div className="mx-auto max-w-6xl space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h1 className="text-lg font-semibold">Policies</h1>
          <p className="text-sm text-slate-600">Every tool call an agent asks about is checked against these rules in order; the first enabled rule that matches decides.</p>
        </div>
        {isAdmin && !editing ? (
          <button type="button" onClick={() => open(null)} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
            New rule
          </button>
        ) : null}
      </div>
      {!isAdmin ? (
        <p role="note" className="rounded border border-slate-300 bg-slate-100 p-2 text-sm text-slate-700" data-testid="read-only-notice">
          Read only: you are signed in as {operator.role.toLowerCase()}. Only admins can change rules and the workspace default; you can still dry-run a call.
        </p>
      ) : null}
      {notice ? (
        <p role="status" className="rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-950">
          {notice}
        </p>
      ) : null}
      {editing && isAdmin ? (
        <RuleEditor
          key={editing.rule?.policyId ?? "new"}
          rule={editing.rule}
          onDone={(saved) => {
            setEditing(null);
            if (saved) setNotice(`Saved rule “${saved}”. It applies from the next call.`);
          }}
        />
      ) : null}
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_22rem]">
        <section aria-labelledby="rules-title" className="min-w-0 space-y-2">
          <h2 id="rules-title" className="text-sm font-semibold">
            Rules in evaluation order{rules.data ? ` (${rules.data.items.length})` : ""}
          </h2>
          {rules.isPending ? (
            <Loading>Loading rules…</Loading>
          ) : rules.error ? (
            <ErrorNote title="Could not load the rules" error={rules.error} />
          ) : rules.data.items.length === 0 ? (
            <>
              <Empty>No rules yet: every call waits for a person under the workspace default.</Empty>
              {isAdmin ? <StarterRules /> : null}
            </>
          ) : (
            <ol className="space-y-2" aria-label="Rules">
              {rules.data.items.map((rule, index) => (
                <RuleCard key={rule.policyId} rule={rule} position={index + 1} canEdit={isAdmin} onEdit={() => open(rule)} />
              ))}
            </ol>
          )}
        </section>
        <aside className="min-w-0 space-y-4">
          <DefaultGate canEdit={isAdmin} />
          <NameSettings canEdit={isAdmin} />
          <DryRun />
        </aside>
      </div>
    </div>
  );
}
