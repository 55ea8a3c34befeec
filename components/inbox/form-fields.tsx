"use client";
// The fields of a form an agent asked a person to fill in (an MCP elicitation),
// rendered from its schema in the order the agent gave them. The server checks
// the answer against the same schema; the browser's own checks only help.
import type { ApprovalItem } from "@/lib/types";

type FormSchema = NonNullable<ApprovalItem["form"]>;
type Field = FormSchema["properties"][string];
export type FormValues = Record<string, unknown>;

const input = "mt-1 w-full rounded border border-slate-300 bg-white px-2 py-1.5 text-sm";

/** The form's defaults, as the starting answer. */
export function defaultsOf(form: FormSchema): FormValues {
  return Object.fromEntries(Object.entries(form.properties).flatMap(([name, field]) => (field.default === undefined ? [] : [[name, field.default]])));
}

function choicesOf(field: Field): { value: string; label: string }[] | null {
  if (field.type === "string") {
    if (field.oneOf) return field.oneOf.map((choice) => ({ value: choice.const, label: choice.title }));
    if (field.enum) return field.enum.map((value, index) => ({ value, label: field.enumNames?.[index] ?? value }));
  }
  if (field.type === "array") {
    return "enum" in field.items ? field.items.enum.map((value) => ({ value, label: value })) : field.items.anyOf.map((choice) => ({ value: choice.const, label: choice.title }));
  }
  return null;
}

const INPUT_TYPE: Record<string, string> = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

export function FormFields({ form, values, onChange, idPrefix }: { form: FormSchema; values: FormValues; onChange(next: FormValues): void; idPrefix: string }) {
  const required = new Set(form.required ?? []);
  const set = (name: string, value: unknown) => {
    const next = { ...values };
    if (value === undefined || value === "") delete next[name];
    else next[name] = value;
    onChange(next);
  };
  return (
    <div className="space-y-3" data-testid="form-fields">
      {Object.entries(form.properties).map(([name, field]) => {
        const id = `${idPrefix}-${name}`;
        const label = (
          <>
            {field.title ?? name}
            {required.has(name) ? <span className="text-red-700"> *</span> : null}
          </>
        );
        const help = field.description ? <p className="mt-0.5 text-xs text-slate-500">{field.description}</p> : null;
        const choices = choicesOf(field);
        if (field.type === "boolean") {
          return (
            <div key={name}>
              <label htmlFor={id} className="flex items-center gap-2 text-sm font-medium text-slate-800">
                <input id={id} type="checkbox" checked={values[name] === true} onChange={(event) => set(name, event.target.checked)} />
                {label}
              </label>
              {help}
            </div>
          );
        }
        if (field.type === "array" && choices) {
          const picked = new Set((values[name] as string[] | undefined) ?? []);
          return (
            <fieldset key={name}>
              <legend className="text-sm font-medium text-slate-800">{label}</legend>
              {help}
              <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">
                {choices.map((choice) => (
                  <label key={choice.value} className="flex items-center gap-1.5 text-sm">
                    <input
                      type="checkbox"
                      checked={picked.has(choice.value)}
                      onChange={(event) => {
                        const next = new Set(picked);
                        if (event.target.checked) next.add(choice.value);
                        else next.delete(choice.value);
                        set(name, next.size ? choices.map((c) => c.value).filter((value) => next.has(value)) : undefined);
                      }}
                    />
                    {choice.label}
                  </label>
                ))}
              </div>
            </fieldset>
          );
        }
        return (
          <div key={name}>
            <label htmlFor={id} className="block text-sm font-medium text-slate-800">
              {label}
            </label>
            {choices ? (
              <select id={id} className={input} required={required.has(name)} value={(values[name] as string | undefined) ?? ""} onChange={(event) => set(name, event.target.value)}>
                <option value="">Choose…</option>
                {choices.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            ) : field.type === "number" || field.type === "integer" ? (
              <input
                id={id}
                type="number"
                className={input}
                required={required.has(name)}
                step={field.type === "integer" ? 1 : "any"}
                min={field.minimum}
                max={field.maximum}
                value={values[name] === undefined ? "" : String(values[name])}
                onChange={(event) => set(name, event.target.value === "" ? undefined : Number(event.target.value))}
              />
            ) : field.type === "string" ? (
              <input
                id={id}
                type={field.format ? INPUT_TYPE[field.format] : "text"}
                className={input}
                required={required.has(name)}
                minLength={field.minLength}
                maxLength={field.maxLength}
                value={field.format === "date-time" ? toLocalInput(values[name]) : ((values[name] as string | undefined) ?? "")}
                onChange={(event) => set(name, field.format === "date-time" && event.target.value ? new Date(event.target.value).toISOString() : event.target.value)}
              />
            ) : null}
            {help}
          </div>
        );
      })}
    </div>
  );
}

/** An ISO date-time as a datetime-local input shows it (local time, to the minute). */
function toLocalInput(value: unknown): string {
  if (typeof value !== "string" || !value) return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
