"use client";
// Editing the arguments before approving them: one field per argument in the
// agent's order (text as text, with its line breaks; numbers and true/false
// keeping their type; anything else as JSON), or the whole call as raw JSON.
// Where the tool's input schema is known (a pinned MCP tool), the edit is
// checked against it before it can be sent.
import { useQuery } from "@tanstack/react-query";
import { dequal } from "dequal";
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useTRPC } from "@/lib/trpc";
import { checkArgsAgainstSchema } from "@/server/domain/args-schema";
import { pathOf } from "@/server/domain/risk";
import { prettyJson } from "../ui";
import { argsOf, fieldsOf, isPlainObject, type ArgField } from "./args-fields";
import type { Arming } from "./use-arming";

type View = "fields" | "json";

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (!text.trim()) return { ok: false, message: "the arguments are empty; write a JSON value" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The input schema of the tool as an admin pinned it for this agent; none when
 * it is not pinned, or when its pins (several versions) disagree on the schema.
 */
function usePinnedInputSchema(agent: string, tool: string): unknown {
  const trpc = useTRPC();
  const pins = useQuery(trpc.policy.pins.queryOptions(undefined, { staleTime: 60_000 }));
  const schemas = (pins.data?.items ?? [])
    .filter((pin) => pin.agent === agent && pin.tool === tool)
    .map((pin) => (pin.definition as { inputSchema?: unknown } | null)?.inputSchema);
  if (schemas.length === 0 || schemas.some((schema) => !schema || !dequal(schema, schemas[0]))) return null;
  return schemas[0];
}

const KIND_HINT: Record<ArgField["kind"], string> = { text: "text", number: "number", boolean: "true or false", json: "JSON" };

export function ArgsEditor(props: {
  proposed: unknown;
  /** The edit as JSON text: the draft that survives a reload. */
  text: string;
  onText(text: string): void;
  agent: string;
  tool: string;
  arming: Arming;
  buttonClassName: string;
  onSend(args: unknown): void;
  onCancel(): void;
}) {
  const { proposed, text, onText, arming, buttonClassName: button } = props;
  const schema = usePinnedInputSchema(props.agent, props.tool);
  const startParsed = parseJson(text);
  const [view, setView] = useState<View>(() => (startParsed.ok && isPlainObject(startParsed.value) ? "fields" : "json"));
  const [fields, setFields] = useState<ArgField[]>(() => (startParsed.ok && isPlainObject(startParsed.value) ? fieldsOf(startParsed.value) : []));
  const [switchProblem, setSwitchProblem] = useState<string | null>(null);
  const first = useRef<HTMLElement | null>(null);

  useEffect(() => first.current?.focus(), [view]);

  const parsed = parseJson(text);
  const fromFields = argsOf(fields);
  const current: { ok: true; value: unknown } | { ok: false; message: string } =
    view === "json" ? parsed : fromFields.ok ? fromFields : { ok: false, message: `${fromFields.key} ${fromFields.message}` };
  const problems = current.ok && schema ? checkArgsAgainstSchema(schema, current.value) : [];
  const sendable = current.ok && problems.length === 0;
  const fieldProblem = (key: string) => (!fromFields.ok && fromFields.key === key ? fromFields.message : problems.find((problem) => problem.path === pathOf([key]))?.message);

  function changeField(index: number, next: ArgField) {
    const updated = fields.map((field, at) => (at === index ? next : field));
    setFields(updated);
    const result = argsOf(updated);
    // The draft follows every edit that reads as arguments.
    if (result.ok) onText(prettyJson(result.value));
  }

  function switchTo(next: View) {
    setSwitchProblem(null);
    if (next === "json") {
      if (!fromFields.ok) return setSwitchProblem(`Fix ${fromFields.key} first: it ${fromFields.message}.`);
      onText(prettyJson(fromFields.value));
    } else {
      if (!parsed.ok) return setSwitchProblem("The JSON does not parse; fix it before editing as fields.");
      if (!isPlainObject(parsed.value)) return setSwitchProblem("Only arguments that are a JSON object can be edited as fields.");
      setFields(fieldsOf(parsed.value));
    }
    setView(next);
  }

  function reset() {
    onText(prettyJson(proposed));
    if (isPlainObject(proposed)) setFields(fieldsOf(proposed));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (sendable) props.onSend(current.value);
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === "Escape") {
      event.preventDefault();
      props.onCancel();
      return;
    }
    if (event.key !== "Enter") return;
    if (event.metaKey || event.ctrlKey) {
      event.preventDefault();
      // A held Ctrl+Enter sends once; a press from before the approval armed sends nothing.
      if (!event.repeat && arming.accepts(event.timeStamp) && sendable) props.onSend(current.value);
      return;
    }
    // Enter in a one-line field ends the line, it does not approve.
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) event.preventDefault();
  }

  const status = !current.ok
    ? `Not sent: ${view === "json" ? `invalid JSON, ${current.message}` : current.message}`
    : problems.length
      ? `Not sent: the tool's input schema refuses ${problems.map((problem) => `${problem.path.replace(/^\$\.?/, "") || "the arguments"} (${problem.message})`).join("; ")}`
      : view === "json"
        ? "Valid JSON."
        : null;

  return (
    <form onSubmit={submit} onKeyDown={onKeyDown} aria-label="Edit the arguments" className="space-y-2 rounded border border-slate-300 bg-white p-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-sm font-medium">Edit the arguments, then approve them</p>
        <div role="group" aria-label="Edit as" className="flex overflow-hidden rounded border border-slate-300 text-xs">
          {(["fields", "json"] as const).map((option) => (
            <button
              key={option}
              type="button"
              aria-pressed={view === option}
              onClick={() => view !== option && switchTo(option)}
              className={`px-2 py-1 ${view === option ? "bg-slate-900 text-white" : "bg-white text-slate-700 hover:bg-slate-100"}`}
            >
              {option === "fields" ? "Fields" : "Raw JSON"}
            </button>
          ))}
        </div>
      </div>

      {view === "fields" ? (
        <div className="space-y-2" data-testid="edit-fields">
          {fields.length === 0 ? <p className="text-xs text-slate-500">This call has no arguments; add some as raw JSON.</p> : null}
          {fields.map((field, index) => {
            const id = `edit-arg-${index}`;
            const problem = fieldProblem(field.key);
            const common = {
              id,
              "aria-invalid": problem ? true : undefined,
              "aria-describedby": problem ? `${id}-problem` : undefined,
              ref: index === 0 ? (element: HTMLElement | null) => void (first.current = element) : undefined,
            };
            const box = `block w-full rounded border bg-white p-1.5 font-mono text-xs leading-5 ${problem ? "border-red-500 bg-red-50/40" : "border-slate-300"}`;
            return (
              <div key={field.key} className="min-w-0">
                <label htmlFor={id} className="flex items-baseline gap-2 text-xs">
                  <span className="font-mono font-semibold text-slate-900">{field.key}</span>
                  <span className="text-slate-500">{KIND_HINT[field.kind]}</span>
                </label>
                {field.kind === "boolean" ? (
                  <select {...common} value={String(field.value)} onChange={(event) => changeField(index, { ...field, value: event.target.value === "true" })} className={`${box} w-auto`}>
                    <option value="true">true</option>
                    <option value="false">false</option>
                  </select>
                ) : field.kind === "text" && !field.multiline ? (
                  <input {...common} type="text" spellCheck={false} value={field.text} onChange={(event) => changeField(index, { ...field, text: event.target.value })} className={box} />
                ) : field.kind === "number" ? (
                  <input {...common} type="text" inputMode="decimal" spellCheck={false} value={field.text} onChange={(event) => changeField(index, { ...field, text: event.target.value })} className={`${box} max-w-48`} />
                ) : (
                  <textarea
                    {...common}
                    spellCheck={false}
                    rows={Math.min(14, Math.max(field.kind === "json" ? 2 : 3, field.text.split("\n").length + (field.kind === "text" ? 1 : 0)))}
                    value={field.text}
                    onChange={(event) => changeField(index, { ...field, text: event.target.value })}
                    className={box}
                  />
                )}
                {problem ? (
                  <p id={`${id}-problem`} className="mt-0.5 text-xs text-red-700">
                    {field.key} {problem}
                  </p>
                ) : null}
              </div>
            );
          })}
        </div>
      ) : (
        <div>
          <label className="block text-xs font-medium" htmlFor="edit-args">
            Edited arguments (JSON)
          </label>
          <textarea
            id="edit-args"
            ref={(element) => void (first.current = element)}
            rows={Math.min(18, Math.max(6, text.split("\n").length + 1))}
            spellCheck={false}
            value={text}
            onChange={(event) => onText(event.target.value)}
            aria-invalid={!parsed.ok}
            aria-describedby="edit-args-status"
            className={`block w-full rounded border p-2 font-mono text-xs leading-5 ${parsed.ok ? "border-slate-300" : "border-red-500 bg-red-50/40"}`}
          />
        </div>
      )}

      <p id="edit-args-status" role={sendable ? undefined : "alert"} className={`min-h-5 text-xs ${sendable ? "text-emerald-700" : "text-red-700"}`}>
        {switchProblem ?? status}
      </p>
      <p className="text-xs text-slate-500" data-testid="edit-schema-note">
        {schema
          ? "Checked against the input schema of this tool's pinned definition."
          : "No input schema is known for this tool (only pinned MCP tools have one here): the tool checks the arguments itself."}{" "}
        Ctrl+Enter approves the edit, Esc cancels.
      </p>
      <div className="flex flex-wrap items-center gap-2">
        <button type="submit" disabled={!sendable} {...arming.press()} className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`}>
          Approve with edits
        </button>
        {view === "json" ? (
          <button type="button" disabled={!parsed.ok} onClick={() => parsed.ok && onText(prettyJson(parsed.value))} className={`${button} border border-slate-300 text-slate-700`}>
            Format
          </button>
        ) : null}
        <button type="button" onClick={reset} className={`${button} text-slate-600`}>
          Reset to proposed
        </button>
        <button type="button" onClick={props.onCancel} className={`${button} text-slate-600`}>
          Cancel
        </button>
      </div>
    </form>
  );
}
