"use client";
// The routing fields, shared by the rule editor and the workspace default.
import { DurationInput } from "../policies/duration-input";
import { Field, inputClass } from "../policies/field";
import type { RouteForm } from "./route-form";

export function RouteFields({ form, onChange, error }: { form: RouteForm; onChange(form: RouteForm): void; error?: string }) {
  const set = <K extends keyof RouteForm>(key: K, value: RouteForm[K]) => onChange({ ...form, [key]: value });
  return (
    <fieldset className="grid min-w-0 grid-cols-1 gap-3 rounded border border-slate-200 p-3 sm:grid-cols-2">
      <legend className="px-1 text-sm font-medium">Who is asked</legend>
      <Field label="Group" hint="Empty: everyone who can decide.">
        {(control) => <input {...control} value={form.group} onChange={(event) => set("group", event.target.value)} placeholder="finance" className={inputClass(false)} />}
      </Field>
      <Field label="Operators (emails)">
        {(control) => <input {...control} value={form.operators} onChange={(event) => set("operators", event.target.value)} placeholder="ada@example.com" className={inputClass(false)} />}
      </Field>
      <Field label="Channels" hint="Empty: every enabled channel.">
        {(control) => <input {...control} value={form.channels} onChange={(event) => set("channels", event.target.value)} placeholder="ops-slack" className={inputClass(false)} />}
      </Field>
      <Field label="Remind before expiry" hint="Announce once more this long before it expires.">
        {(control) => <DurationInput control={control} unitLabel="Reminder unit" value={form.remindBefore} onChange={(value) => set("remindBefore", value)} />}
      </Field>
      <Field label="Escalate when undecided after">
        {(control) => <DurationInput control={control} unitLabel="Escalation unit" value={form.escalateAfter} onChange={(value) => set("escalateAfter", value)} />}
      </Field>
      <Field label="Then ask">
        {(control) => (
          <select {...control} value={form.escalateRole} onChange={(event) => set("escalateRole", event.target.value as RouteForm["escalateRole"])} className={inputClass(false)}>
            <option value="">the group or operators below</option>
            <option value="ADMIN">admins</option>
            <option value="OPERATOR">operators and admins</option>
          </select>
        )}
      </Field>
      <Field label="Escalation group">
        {(control) => <input {...control} value={form.escalateGroup} onChange={(event) => set("escalateGroup", event.target.value)} placeholder="on-call" className={inputClass(false)} />}
      </Field>
      <Field label="Escalation operators (emails)">
        {(control) => <input {...control} value={form.escalateOperators} onChange={(event) => set("escalateOperators", event.target.value)} className={inputClass(false)} />}
      </Field>
      {form.laterSteps.length ? <p className="text-xs text-slate-500 sm:col-span-2">and {form.laterSteps.length} later escalation step(s) set through the API, kept as they are.</p> : null}
      {error ? (
        <p className="text-xs text-red-700 sm:col-span-2" data-testid="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
