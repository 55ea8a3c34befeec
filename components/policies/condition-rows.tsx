"use client";
// The conditions of a rule on arguments or session metadata: rows of
// {path, op, value} that can be added and removed; all must hold.
import { useId } from "react";
import { OP_LABELS } from "./describe";
import { inputClass } from "./field";
import { CONDITION_OPS, emptyCondition, type ConditionOp, type ConditionRow, type FieldErrors } from "./rule-form";

const VALUE_HINT: Record<ConditionOp, string> = {
  eq: "JSON (42, true, \"42\") or plain text",
  neq: "JSON (42, true, \"42\") or plain text",
  lt: "a number, or text to compare as text",
  lte: "a number, or text to compare as text",
  gt: "a number, or text to compare as text",
  gte: "a number, or text to compare as text",
  in: 'a JSON list: ["EUR", "USD"]',
  matches: "RE2 regular expression, e.g. @example\\.com$",
  exists: "",
};

export function ConditionRows({
  legend,
  field,
  rows,
  errors,
  disabled,
  onChange,
}: {
  legend: string;
  field: "args" | "session";
  rows: ConditionRow[];
  errors: FieldErrors;
  disabled?: boolean;
  onChange(rows: ConditionRow[]): void;
}) {
  const id = useId();
  const update = (index: number, patch: Partial<ConditionRow>) => onChange(rows.map((row, at) => (at === index ? { ...row, ...patch } : row)));
  const noun = field === "args" ? "argument condition" : "session metadata condition";
  return (
    <fieldset className="min-w-0 space-y-2">
      <legend className="text-xs font-medium text-slate-700">{legend}</legend>
      {rows.length === 0 ? <p className="text-xs text-slate-500">None: any {field === "args" ? "arguments" : "session"}.</p> : null}
      <ol className="space-y-2">
        {rows.map((row, index) => {
          const error = errors[`match.${field}.${index}`];
          const errorId = `${id}-${index}-error`;
          const control = { "aria-invalid": error ? true : undefined, "aria-describedby": error ? errorId : undefined };
          const n = index + 1;
          return (
            <li key={row.key} className="rounded border border-slate-200 bg-slate-50 p-2" data-testid={`${field}-condition`}>
              <div className="grid grid-cols-1 gap-2 sm:grid-cols-[minmax(0,1fr)_11rem_minmax(0,1fr)_auto] sm:items-start">
                <input
                  {...control}
                  aria-label={`${noun} ${n}: JSON path`}
                  placeholder="$.amount"
                  value={row.path}
                  disabled={disabled}
                  onChange={(event) => update(index, { path: event.target.value })}
                  className={`${inputClass(Boolean(error))} font-mono`}
                />
                <select
                  aria-label={`${noun} ${n}: operator`}
                  value={row.op}
                  disabled={disabled}
                  onChange={(event) => {
                    const op = event.target.value as ConditionOp;
                    update(index, { op, value: op === "exists" ? "present" : row.op === "exists" ? "" : row.value });
                  }}
                  className="rounded border border-slate-300 bg-white px-2 py-1 text-sm"
                >
                  {CONDITION_OPS.map((op) => (
                    <option key={op} value={op}>
                      {OP_LABELS[op]}
                    </option>
                  ))}
                </select>
                {row.op === "exists" ? (
                  <select
                    {...control}
                    aria-label={`${noun} ${n}: present or absent`}
                    value={row.value === "absent" ? "absent" : "present"}
                    disabled={disabled}
                    onChange={(event) => update(index, { value: event.target.value })}
                    className="rounded border border-slate-300 bg-white px-2 py-1 text-sm"
                  >
                    <option value="present">is present</option>
                    <option value="absent">is absent</option>
                  </select>
                ) : (
                  <input
                    {...control}
                    aria-label={`${noun} ${n}: value`}
                    placeholder={VALUE_HINT[row.op]}
                    title={VALUE_HINT[row.op]}
                    value={row.value}
                    disabled={disabled}
                    onChange={(event) => update(index, { value: event.target.value })}
                    className={`${inputClass(Boolean(error))} font-mono`}
                  />
                )}
                <button
                  type="button"
                  disabled={disabled}
                  aria-label={`Remove ${noun} ${n}`}
                  onClick={() => onChange(rows.filter((_, at) => at !== index))}
                  className="justify-self-start rounded px-2 py-1 text-sm text-slate-600 hover:bg-slate-200"
                >
                  Remove
                </button>
              </div>
              {error ? (
                <p id={errorId} className="mt-1 text-xs text-red-700" data-testid="field-error">
                  {error}
                </p>
              ) : null}
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        disabled={disabled || rows.length >= 20}
        onClick={() => onChange([...rows, emptyCondition()])}
        className="rounded border border-slate-300 bg-white px-2 py-1 text-xs hover:bg-slate-100 disabled:opacity-50"
      >
        Add {noun}
      </button>
    </fieldset>
  );
}
