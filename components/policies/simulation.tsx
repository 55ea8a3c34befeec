"use client";
// What the rule being edited would have done to the last N real approvals.
// Nothing is recorded: policy.simulate replays them against the rules with the draft in place.
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPCClient } from "@/lib/trpc";
import type { SimulationResult } from "@/lib/types";
import { inputClass } from "./field";
import type { PolicyInput } from "./rule-form";

const OUTCOME_WORD = { approve: "auto-approved", reject: "auto-rejected", require: "left to a person" } as const;

function Summary({ result, asked }: { result: SimulationResult; asked: number }) {
  if (result.replayed === 0) return <p className="text-sm text-slate-600">There are no approvals yet to replay; the simulation has nothing to go on.</p>;
  const { approve, reject, require } = result.outcomes;
  return (
    <div className="space-y-2 text-sm">
      <p data-testid="simulation-summary">
        With this change, of the last {result.replayed} approvals{result.replayed < asked ? ` (all there are)` : ""}:{" "}
        <strong>{approve} would have been auto-approved</strong>, <strong>{reject} auto-rejected</strong> and {require} left to a person. This rule
        would have decided {result.matchedDraft} of them.
      </p>
      <p>
        {result.changed === 0
          ? "No outcome changes compared with the rules as they are."
          : `${result.changed} ${result.changed === 1 ? "outcome differs" : "outcomes differ"} from the rules as they are${result.examples.length < result.changed ? `; the first ${result.examples.length}:` : ":"}`}
      </p>
      {result.examples.length ? (
        <ul className="max-h-48 space-y-0.5 overflow-auto text-xs" aria-label="Approvals whose outcome changes">
          {result.examples.map((example) => (
            <li key={example.approvalId} className="flex flex-wrap gap-x-2">
              <Link href={`/approvals/${example.approvalId}`} className="font-mono underline decoration-slate-300 hover:decoration-slate-900">
                {example.approvalId}
              </Link>
              <span className="font-mono">
                {example.tool} by {example.agent}
              </span>
              <span>
                {OUTCOME_WORD[example.before]} → <strong>{OUTCOME_WORD[example.after]}</strong>
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Simulation({ draft, replacePolicyId }: { draft: () => PolicyInput | null; replacePolicyId?: string }) {
  const client = useTRPCClient();
  const id = useId();
  const [last, setLast] = useState("1000");
  const count = Number(last);
  const lastValid = Number.isInteger(count) && count >= 1 && count <= 10_000;
  const simulate = useMutation({
    mutationFn: (input: { draft: PolicyInput; last: number }) =>
      client.policy.simulate.query({ draft: input.draft, last: input.last, ...(replacePolicyId ? { replacePolicyId } : {}) }),
  });

  function run() {
    if (!lastValid) return;
    const input = draft();
    if (input) simulate.mutate({ draft: input, last: count });
  }

  return (
    <section aria-label="Simulation" className="space-y-2 rounded border border-sky-200 bg-sky-50/60 p-3">
      <div className="flex flex-wrap items-end gap-2">
        <div className="space-y-1">
          <label htmlFor={id} className="block text-xs font-medium text-slate-700">
            Approvals to replay
          </label>
          <input
            id={id}
            inputMode="numeric"
            value={last}
            onChange={(event) => setLast(event.target.value)}
            aria-invalid={lastValid ? undefined : true}
            aria-describedby={lastValid ? undefined : `${id}-error`}
            className={`${inputClass(!lastValid, "w-24")} tabular-nums`}
          />
        </div>
        <button
          type="button"
          onClick={run}
          disabled={simulate.isPending || !lastValid}
          className="rounded border border-sky-300 bg-white px-3 py-1.5 text-sm font-medium text-sky-900 hover:bg-sky-100 disabled:opacity-50"
        >
          {simulate.isPending ? "Simulating…" : `Simulate over last ${lastValid ? count : "N"} approvals`}
        </button>
      </div>
      {lastValid ? null : (
        <p id={`${id}-error`} className="text-xs text-red-700">
          A whole number from 1 to 10000.
        </p>
      )}
      {simulate.error ? (
        <p role="alert" className="text-sm text-red-700">
          Could not simulate: {errorMessage(simulate.error)}
        </p>
      ) : simulate.data && simulate.variables ? (
        <div role="status">
          <Summary result={simulate.data} asked={simulate.variables.last} />
        </div>
      ) : (
        <p className="text-xs text-slate-600">Replays recent approvals against the rules with this draft in place. Nothing is saved.</p>
      )}
    </section>
  );
}
