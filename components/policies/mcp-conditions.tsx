"use client";
// The rule's conditions on MCP tools: only pinned tools, and the hints the
// tool must give. A hint that claims safety is offered only with "pinned",
// as the server refuses it otherwise.
import { useId } from "react";
import { Field, inputClass } from "./field";
import { HINTS, type Hint, type HintMatch } from "./rule-form";

const LABELS: Record<Hint, { label: string; yes: string; no: string; safe: boolean }> = {
  readOnlyHint: { label: "Read-only", yes: "says read-only", no: "not read-only (or says nothing)", safe: true },
  destructiveHint: { label: "Destructive", yes: "destructive (or says nothing)", no: "says not destructive", safe: false },
  idempotentHint: { label: "Idempotent", yes: "says idempotent", no: "not idempotent (or says nothing)", safe: true },
  openWorldHint: { label: "Open world", yes: "open world (or says nothing)", no: "says closed world", safe: false },
};

/** Whether choosing `value` for `hint` relies on the server's claim that its tool is safe. */
const claimsSafety = (hint: Hint, value: boolean) => (LABELS[hint].safe ? value : !value);

export function McpConditions({
  pinned,
  annotations,
  error,
  onChange,
}: {
  pinned: boolean;
  annotations: HintMatch;
  error?: string;
  onChange(pinned: boolean, annotations: HintMatch): void;
}) {
  const pinnedId = useId();
  const setHint = (hint: Hint, choice: string) => {
    const next = { ...annotations };
    if (choice === "") delete next[hint];
    else next[hint] = choice === "true";
    onChange(pinned, next);
  };
  return (
    <fieldset className="min-w-0 space-y-2 rounded border border-slate-200 p-3">
      <legend className="px-1 text-sm">MCP tools (calls through tollgate-mcp)</legend>
      {/* The explanation describes the checkbox rather than naming it, so its words are not the control's label. */}
      <div className="flex items-start gap-2 text-sm">
        <input
          id={pinnedId}
          type="checkbox"
          checked={pinned}
          aria-describedby={`${pinnedId}-hint`}
          onChange={(event) => onChange(event.target.checked, annotations)}
          className="mt-1"
        />
        <div>
          <label htmlFor={pinnedId}>Only tools an admin pinned</label>
          <span id={`${pinnedId}-hint`} className="block text-xs text-slate-500">
            The call&apos;s tool must be listed by its server exactly as when it was pinned (name, description, hints, input schema).
          </span>
        </div>
      </div>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        {HINTS.map((hint) => (
          <Field key={hint} label={`${LABELS[hint].label} (${hint})`} error={hint === HINTS[0] ? error : undefined}>
            {(control) => (
              <select {...control} value={annotations[hint] === undefined ? "" : String(annotations[hint])} onChange={(event) => setHint(hint, event.target.value)} className={inputClass(Boolean(error))}>
                <option value="">any</option>
                {[true, false].map((value) => (
                  <option key={String(value)} value={String(value)} disabled={!pinned && claimsSafety(hint, value)}>
                    {value ? LABELS[hint].yes : LABELS[hint].no}
                    {!pinned && claimsSafety(hint, value) ? " (pinned tools only)" : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ))}
      </div>
    </fieldset>
  );
}
