"use client";
// Creating or editing one rule. The form checks what the server would check
// before sending, and a refusal from the server lands on the field it names.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { errorCode, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import type { PolicyItem } from "@/lib/types";
import { ConditionRows } from "./condition-rows";
import { DurationInput } from "./duration-input";
import { Field, inputClass } from "./field";
import { McpConditions } from "./mcp-conditions";
import { RouteFields } from "../notifications/route-fields";
import { ACTIONS, buildRuleInput, emptyForm, errorsFromServer, formFromRule, type FieldErrors, type Outcome, type PolicyInput, type RuleForm } from "./rule-form";
import { Simulation } from "./simulation";

const OUTCOMES: { value: Outcome; label: string; hint: string }[] = [
  { value: "approve", label: "Auto-approve", hint: "the call runs at once" },
  { value: "reject", label: "Auto-reject", hint: "the agent gets your message" },
  { value: "require", label: "Require a person", hint: "an approver decides" },
];

const ACTION_NAMES = { approve: "approve", reject: "reject", edit: "edit arguments", respond: "answer instead" } as const;

export function RuleEditor({ rule, onDone }: { rule: PolicyItem | null; onDone(saved: string | null): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<RuleForm>(() => (rule ? formFromRule(rule) : emptyForm()));
  const [errors, setErrors] = useState<FieldErrors>({});
  const heading = useRef<HTMLHeadingElement>(null);
  const set = <K extends keyof RuleForm>(key: K, value: RuleForm[K]) => setForm((current) => ({ ...current, [key]: value }));

  useEffect(() => heading.current?.focus(), []);

  const onError = (error: unknown) => {
    if (errorCode(error) === "FORBIDDEN") setErrors({ form: `${errorMessage(error)}. Only admins can change rules.` });
    else if (errorCode(error) === "BAD_REQUEST" || errorCode(error) === "CONFLICT") setErrors(errorsFromServer(errorMessage(error), form));
    else setErrors({ form: `Could not save: ${errorMessage(error)}` });
  };
  const onSettled = () => queryClient.invalidateQueries({ queryKey: trpc.policy.pathKey() });
  const create = useMutation(trpc.policy.create.mutationOptions({ onSuccess: (saved) => onDone(saved.name), onError, onSettled }));
  const update = useMutation(trpc.policy.update.mutationOptions({ onSuccess: (saved) => onDone(saved.name), onError, onSettled }));
  const busy = create.isPending || update.isPending;

  /** The request, or null with the errors shown. */
  function checked(): PolicyInput | null {
    const built = buildRuleInput(form);
    setErrors(built.ok ? {} : built.errors);
    return built.ok ? built.input : null;
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const input = checked();
    if (!input) return;
    if (rule) update.mutate({ policyId: rule.policyId, ...input });
    else create.mutate(input);
  }

  const asks = form.outcome === "require";
  const errorCount = Object.keys(errors).length;

  return (
    <section aria-labelledby="rule-editor-title" className="space-y-4 rounded border border-slate-300 bg-white p-4 shadow-sm">
      <h2 id="rule-editor-title" ref={heading} tabIndex={-1} className="text-base font-semibold outline-none">
        {rule ? `Edit rule “${rule.name}” (version ${rule.version})` : "New rule"}
      </h2>
      <form onSubmit={submit} noValidate className="space-y-4" aria-label={rule ? `Edit rule ${rule.name}` : "New rule"}>
        {errorCount ? (
          <div role="alert" className="rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
            {errors.form ?? `Nothing was saved: ${errorCount === 1 ? "one field needs" : `${errorCount} fields need`} fixing (marked below).`}
          </div>
        ) : null}

        <div className="grid grid-cols-1 gap-3 sm:grid-cols-[minmax(0,1fr)_9rem]">
          <Field label="Name" error={errors.name} hint="Decisions made by this rule are signed with its name.">
            {(control) => <input {...control} value={form.name} onChange={(event) => set("name", event.target.value)} className={inputClass(Boolean(errors.name))} />}
          </Field>
          <Field label="Priority" error={errors.priority} hint={rule ? "Lower runs first; empty: unchanged." : "Lower runs first; empty: last."}>
            {(control) => (
              <input {...control} inputMode="numeric" value={form.priority} onChange={(event) => set("priority", event.target.value)} className={`${inputClass(Boolean(errors.priority))} tabular-nums`} />
            )}
          </Field>
        </div>
        <Field label="Description (optional)" error={errors.description}>
          {(control) => <input {...control} value={form.description} onChange={(event) => set("description", event.target.value)} className={inputClass(Boolean(errors.description))} />}
        </Field>

        <fieldset className="min-w-0 space-y-3 rounded border border-slate-200 p-3">
          <legend className="px-1 text-sm font-medium">Matches</legend>
          <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
            <Field label="Agent (glob)" error={errors["match.agent"]} hint="Empty: any agent. billing-*, demo">
              {(control) => <input {...control} value={form.agent} onChange={(event) => set("agent", event.target.value)} className={`${inputClass(Boolean(errors["match.agent"]))} font-mono`} />}
            </Field>
            <Field label="Tool (glob)" error={errors["match.tool"]} hint="Empty: any tool. read_*, mcp/*">
              {(control) => <input {...control} value={form.tool} onChange={(event) => set("tool", event.target.value)} className={`${inputClass(Boolean(errors["match.tool"]))} font-mono`} />}
            </Field>
            <Field label="Agent key id (optional)" error={errors["match.agentKeyId"]}>
              {(control) => (
                <input {...control} placeholder="key_…" value={form.agentKeyId} onChange={(event) => set("agentKeyId", event.target.value)} className={`${inputClass(Boolean(errors["match.agentKeyId"]))} font-mono`} />
              )}
            </Field>
            <Field label="Session id (optional)" error={errors["match.sessionId"]}>
              {(control) => (
                <input {...control} placeholder="ses_…" value={form.sessionId} onChange={(event) => set("sessionId", event.target.value)} className={`${inputClass(Boolean(errors["match.sessionId"]))} font-mono`} />
              )}
            </Field>
          </div>
          <ConditionRows legend="Argument conditions (all must hold)" field="args" rows={form.args} errors={errors} onChange={(rows) => set("args", rows)} />
          <ConditionRows legend="Session metadata conditions (all must hold)" field="session" rows={form.session} errors={errors} onChange={(rows) => set("session", rows)} />
          <McpConditions
            pinned={form.pinned}
            annotations={form.annotations}
            error={errors["match.annotations"]}
            onChange={(pinned, annotations) => setForm((current) => ({ ...current, pinned, annotations }))}
          />
        </fieldset>

        <fieldset className="min-w-0 space-y-3 rounded border border-slate-200 p-3">
          <legend className="px-1 text-sm font-medium">Outcome</legend>
          <div className="flex flex-wrap gap-x-5 gap-y-2" role="radiogroup" aria-label="Outcome">
            {OUTCOMES.map((option) => (
              <label key={option.value} className="flex items-start gap-1.5 text-sm">
                <input type="radio" name="outcome" value={option.value} checked={form.outcome === option.value} onChange={() => set("outcome", option.value)} className="mt-1" />
                <span>
                  {option.label}
                  <span className="block text-xs text-slate-500">{option.hint}</span>
                </span>
              </label>
            ))}
          </div>
          {form.outcome === "reject" ? (
            <Field label="Message to the agent" error={errors.message}>
              {(control) => <textarea {...control} rows={2} value={form.message} onChange={(event) => set("message", event.target.value)} className={inputClass(Boolean(errors.message))} />}
            </Field>
          ) : null}
          {form.outcome === "approve" ? (
            <Field label="Message to the agent (optional)" error={errors.message}>
              {(control) => <input {...control} value={form.message} onChange={(event) => set("message", event.target.value)} className={inputClass(Boolean(errors.message))} />}
            </Field>
          ) : null}
          {asks ? (
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
              <Field label="Who decides" error={errors.role}>
                {(control) => (
                  <select {...control} value={form.role} onChange={(event) => set("role", event.target.value as RuleForm["role"])} className={inputClass(false)}>
                    <option value="OPERATOR">approvers or admins</option>
                    <option value="ADMIN">admins only</option>
                  </select>
                )}
              </Field>
              <Field label="Approvers needed (quorum)" error={errors.approvers} hint="Any rejection vetoes; with 2 or more, editing arguments is off.">
                {(control) => (
                  <input {...control} inputMode="numeric" value={form.approvers} onChange={(event) => set("approvers", event.target.value)} className={`${inputClass(Boolean(errors.approvers), "w-24")} tabular-nums`} />
                )}
              </Field>
              <fieldset className="min-w-0 sm:col-span-2">
                <legend className="text-xs font-medium text-slate-700">Allowed actions</legend>
                <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1 text-sm">
                  {ACTIONS.map((action) => (
                    <label key={action} className="flex items-center gap-1.5">
                      <input
                        type="checkbox"
                        checked={action === "reject" || form.allow.includes(action)}
                        disabled={action === "reject"}
                        onChange={(event) => set("allow", event.target.checked ? [...form.allow, action] : form.allow.filter((item) => item !== action))}
                      />
                      {ACTION_NAMES[action]}
                      {action === "reject" ? <span className="text-xs text-slate-500">(always: a person can say no)</span> : null}
                      {action === "edit" && Number(form.approvers) > 1 ? <span className="text-xs text-slate-500">(off while 2 or more must approve)</span> : null}
                    </label>
                  ))}
                </div>
                {errors.allow ? <p className="text-xs text-red-700">{errors.allow}</p> : null}
              </fieldset>
              <Field label="Timeout" error={errors.timeoutMs} hint="Empty: waits until someone decides.">
                {(control) => <DurationInput control={control} unitLabel="Timeout unit" value={form.timeout} onChange={(value) => set("timeout", value)} />}
              </Field>
              <Field label="When the timeout passes" error={errors.onTimeout}>
                {(control) => (
                  <select {...control} value={form.onTimeout} onChange={(event) => set("onTimeout", event.target.value as RuleForm["onTimeout"])} className={inputClass(false)}>
                    <option value="reject">reject the call</option>
                    <option value="cancel">cancel the call</option>
                  </select>
                )}
              </Field>
              <label className="flex items-start gap-1.5 text-sm sm:col-span-2">
                <input type="checkbox" className="mt-1" checked={form.allowApproveOnTimeout} onChange={(event) => set("allowApproveOnTimeout", event.target.checked)} />
                <span>
                  Let agents ask for approval on timeout
                  <span className="block text-xs text-slate-500">Off, an agent asking for onTimeout &quot;approve&quot; is refused (fail closed).</span>
                </span>
              </label>
              <div className="sm:col-span-2">
                <RouteFields form={form.route} onChange={(route) => set("route", route)} error={errors.route} />
              </div>
            </div>
          ) : null}
        </fieldset>

        <fieldset className="grid min-w-0 grid-cols-1 gap-3 rounded border border-slate-200 p-3 sm:grid-cols-2">
          <legend className="px-1 text-sm font-medium">What reviewers see</legend>
          <Field label="Risk label (optional)" error={errors.riskLabel} hint="Shown on the inbox row and above the arguments: deletes customer data">
            {(control) => <input {...control} value={form.riskLabel} onChange={(event) => set("riskLabel", event.target.value)} className={inputClass(Boolean(errors.riskLabel))} />}
          </Field>
          <Field label="Arguments to highlight (optional)" error={errors.riskPaths} hint="One path a line, as in conditions: $.query, $.rows[0].id">
            {(control) => (
              <textarea {...control} rows={2} value={form.riskPaths} onChange={(event) => set("riskPaths", event.target.value)} className={`${inputClass(Boolean(errors.riskPaths))} font-mono`} />
            )}
          </Field>
        </fieldset>

        <fieldset className="grid min-w-0 grid-cols-1 gap-3 rounded border border-slate-200 p-3 sm:grid-cols-2">
          <legend className="px-1 text-sm font-medium">Lifetime</legend>
          <label className="flex items-center gap-1.5 self-center text-sm">
            <input type="checkbox" checked={form.enabled} onChange={(event) => set("enabled", event.target.checked)} />
            Enabled
          </label>
          <Field label="Expires (optional)" error={errors.expiresAt}>
            {(control) => <input {...control} type="datetime-local" step={1} value={form.expiresAt} onChange={(event) => set("expiresAt", event.target.value)} className={inputClass(Boolean(errors.expiresAt))} />}
          </Field>
        </fieldset>

        <div className="flex flex-wrap items-center gap-2">
          <button type="submit" disabled={busy} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50">
            {busy ? "Saving…" : rule ? "Save changes" : "Create rule"}
          </button>
          <button type="button" onClick={() => onDone(null)} className="rounded px-3 py-1.5 text-sm text-slate-600 hover:bg-slate-100">
            Cancel
          </button>
        </div>
      </form>
      <Simulation draft={checked} replacePolicyId={rule?.policyId} />
    </section>
  );
}
