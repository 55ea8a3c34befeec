"use client";
// The workspace default gate: what applies when no rule matches. A person
// decides; an undecided approval fails closed (reject or cancel) after the timeout.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { formatDuration } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading } from "../ui";
import { durationFromMs, durationToMs, type DurationText } from "./duration";
import { DurationInput } from "./duration-input";
import { Field, inputClass } from "./field";

function describe(gate: { timeoutMs: number | null; onTimeout: "reject" | "cancel" }): string {
  return gate.timeoutMs === null
    ? "A person decides; approvals wait without a timeout."
    : `A person decides; after ${formatDuration(gate.timeoutMs)} an undecided approval is ${gate.onTimeout === "cancel" ? "canceled" : "rejected"}.`;
}

function GateForm({ initial, onSaved }: { initial: { timeoutMs: number | null; onTimeout: "reject" | "cancel" }; onSaved(): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [timeout, setTimeoutText] = useState<DurationText>(() => durationFromMs(initial.timeoutMs));
  const [onTimeout, setOnTimeout] = useState(initial.onTimeout);
  const [error, setError] = useState<string | null>(null);
  const save = useMutation(
    trpc.policy.setDefaults.mutationOptions({
      onSuccess: () => {
        setError(null);
        onSaved();
      },
      onError: (failure) => setError(errorMessage(failure)),
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.policy.defaults.queryKey() }),
    }),
  );

  return (
    <form
      noValidate
      aria-label="Workspace default gate"
      className="space-y-3"
      onSubmit={(event) => {
        event.preventDefault();
        const ms = durationToMs(timeout);
        if (!ms.ok) return setError(`timeout: ${ms.message}`);
        if (ms.ms !== null && ms.ms < 1000) return setError("timeout: at least one second");
        save.mutate({ timeoutMs: ms.ms, onTimeout });
      }}
    >
      <Field label="Default timeout" error={error ?? undefined} hint="Empty: no timeout.">
        {(control) => <DurationInput control={control} unitLabel="Default timeout unit" value={timeout} onChange={setTimeoutText} />}
      </Field>
      <Field label="Then (fail closed)">
        {(control) => (
          <select {...control} value={onTimeout} onChange={(event) => setOnTimeout(event.target.value as "reject" | "cancel")} className={inputClass(false)}>
            <option value="reject">reject the call</option>
            <option value="cancel">cancel the call</option>
          </select>
        )}
      </Field>
      <button type="submit" disabled={save.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50">
        {save.isPending ? "Saving…" : "Save default"}
      </button>
    </form>
  );
}

export function DefaultGate({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const gate = useQuery(trpc.policy.defaults.queryOptions());
  const [saved, setSaved] = useState(false);
  return (
    <section aria-labelledby="default-gate-title" className="space-y-3 rounded border border-slate-200 bg-white p-4">
      <h2 id="default-gate-title" className="text-sm font-semibold">
        Workspace default
      </h2>
      <p className="text-xs text-slate-600">Applies when no rule matches.</p>
      {gate.isPending ? (
        <Loading />
      ) : gate.error ? (
        <ErrorNote title="Could not load the default gate" error={gate.error} />
      ) : (
        <>
          <p className="text-sm" data-testid="default-gate" role={saved ? "status" : undefined}>
            {saved ? "Saved. " : ""}
            {describe(gate.data)}
          </p>
          {canEdit ? <GateForm key={`${gate.data.timeoutMs}-${gate.data.onTimeout}`} initial={gate.data} onSaved={() => setSaved(true)} /> : null}
        </>
      )}
    </section>
  );
}
