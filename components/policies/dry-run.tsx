"use client";
// The dry run: which rule a call would hit, and why each rule before it did not.
// Nothing is recorded (policy.evaluate).
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { errorMessage } from "@/lib/errors";
import { formatDuration } from "@/lib/format";
import { useTRPCClient } from "@/lib/trpc";
import type { DryRunResult } from "@/lib/types";
import { Field, inputClass } from "./field";
import { parseJsonObject, parseJsonText } from "./json-text";

type DryRunInput = Parameters<ReturnType<typeof useTRPCClient>["policy"]["evaluate"]["query"]>[0];
type Json = DryRunInput["args"];

function Decision({ result }: { result: DryRunResult }) {
  const by = result.name ? `the rule “${result.name}”` : "the workspace default (no rule matched)";
  if (result.outcome === "approve") return <p className="font-medium text-emerald-900">Approved automatically by {by}.</p>;
  if (result.outcome === "reject") return <p className="font-medium text-red-900">Rejected automatically by {by}: “{result.message}”.</p>;
  const gate = result.gate;
  return (
    <p className="font-medium text-amber-950">
      A person decides, set by {by}
      {gate
        ? `: ${gate.approvers > 1 ? `${gate.approvers} ` : "an "}${gate.role === "ADMIN" ? "admin" : "approver"}${gate.approvers > 1 ? "s" : ""}; may ${gate.allow.join(", ")}; ${
            gate.timeoutMs === null ? "no timeout" : `after ${formatDuration(gate.timeoutMs)} it is ${gate.onTimeout === "cancel" ? "canceled" : "rejected"}`
          }`
        : ""}
      .
    </p>
  );
}

function Trail({ result }: { result: DryRunResult }) {
  if (result.trail.length === 0) return <p className="text-xs text-slate-600">There are no rules yet.</p>;
  return (
    <ol className="space-y-1 text-xs" aria-label="Explanation">
      {result.trail.map((step, index) => (
        <li key={step.policyId} className={`rounded px-2 py-1 ${step.matched ? "bg-emerald-100 text-emerald-950" : "bg-slate-100 text-slate-700"}`}>
          <span className="mr-1 tabular-nums text-slate-500">{index + 1}.</span>
          <span className="font-medium">{step.matched ? "✓ matched" : "✗ skipped"}</span> <span className="font-medium">“{step.name}”</span>: {step.reason}
        </li>
      ))}
      {result.policyId === null ? <li className="px-2 py-1 text-slate-600">No rule matched: the workspace default applies.</li> : null}
    </ol>
  );
}

export function DryRun() {
  const client = useTRPCClient();
  const [agent, setAgent] = useState("");
  const [tool, setTool] = useState("");
  const [args, setArgs] = useState("{}");
  const [metadata, setMetadata] = useState("");
  const [mcpTool, setMcpTool] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const evaluate = useMutation({
    mutationFn: (input: DryRunInput) => client.policy.evaluate.query(input),
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: Record<string, string> = {};
    if (!agent.trim()) next.agent = "the agent's name, as the call would carry it";
    if (!tool.trim()) next.tool = "the tool's name";
    const parsedArgs = parseJsonText(args, { value: {} });
    if (!parsedArgs.ok) next.args = parsedArgs.message;
    const parsedMetadata = parseJsonObject(metadata);
    if (!parsedMetadata.ok) next.metadata = parsedMetadata.message;
    const parsedTool = parseJsonObject(mcpTool, '{"name": "read_file", "annotations": {"readOnlyHint": true}}');
    if (!parsedTool.ok) next.mcpTool = parsedTool.message;
    setErrors(next);
    if (Object.keys(next).length || !parsedArgs.ok || !parsedMetadata.ok || !parsedTool.ok) return;
    const listed = parsedTool.value as { name?: unknown; annotations?: DryRunInput["annotations"] } | undefined;
    evaluate.mutate({
      agent: agent.trim(),
      tool: tool.trim(),
      // Parsed from JSON text, so JSON by construction.
      args: parsedArgs.value as Json,
      ...(parsedMetadata.value !== undefined ? { sessionMetadata: parsedMetadata.value as Json } : {}),
      // The tool as its MCP server lists it: its hints, and (named) the definition a pin is checked against.
      ...(listed?.annotations !== undefined ? { annotations: listed.annotations } : {}),
      ...(listed && typeof listed.name === "string" ? { toolDefinition: listed as DryRunInput["toolDefinition"] } : {}),
    });
  }

  return (
    <section aria-labelledby="dry-run-title" className="space-y-3 rounded border border-slate-200 bg-white p-4">
      <h2 id="dry-run-title" className="text-sm font-semibold">
        Dry run
      </h2>
      <p className="text-xs text-slate-600">Which rule would this call hit, and why? Nothing is recorded.</p>
      <form onSubmit={submit} noValidate aria-label="Dry run" className="space-y-3">
        <div className="grid grid-cols-2 gap-2">
          <Field label="Agent" error={errors.agent}>
            {(control) => <input {...control} value={agent} onChange={(event) => setAgent(event.target.value)} className={`${inputClass(Boolean(errors.agent))} font-mono`} />}
          </Field>
          <Field label="Tool" error={errors.tool}>
            {(control) => <input {...control} value={tool} onChange={(event) => setTool(event.target.value)} className={`${inputClass(Boolean(errors.tool))} font-mono`} />}
          </Field>
        </div>
        <Field label="Arguments (JSON)" error={errors.args}>
          {(control) => (
            <textarea {...control} rows={3} spellCheck={false} value={args} onChange={(event) => setArgs(event.target.value)} className={`${inputClass(Boolean(errors.args))} font-mono text-xs`} />
          )}
        </Field>
        <Field label="Session metadata (JSON object, optional)" error={errors.metadata}>
          {(control) => (
            <textarea
              {...control}
              rows={2}
              spellCheck={false}
              placeholder='{"tier": "gold"}'
              value={metadata}
              onChange={(event) => setMetadata(event.target.value)}
              className={`${inputClass(Boolean(errors.metadata))} font-mono text-xs`}
            />
          )}
        </Field>
        <Field label="MCP tool as its server lists it (JSON object, optional)" error={errors.mcpTool}>
          {(control) => (
            <textarea
              {...control}
              rows={2}
              spellCheck={false}
              placeholder='{"name": "read_file", "annotations": {"readOnlyHint": true}}'
              value={mcpTool}
              onChange={(event) => setMcpTool(event.target.value)}
              className={`${inputClass(Boolean(errors.mcpTool))} font-mono text-xs`}
            />
          )}
        </Field>
        <button type="submit" disabled={evaluate.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50">
          {evaluate.isPending ? "Evaluating…" : "Dry run"}
        </button>
      </form>
      {evaluate.error ? (
        <p role="alert" className="text-sm text-red-700">
          Could not evaluate: {errorMessage(evaluate.error)}
        </p>
      ) : evaluate.data ? (
        <div role="status" aria-label="Dry run result" className="space-y-2 rounded border border-slate-200 bg-slate-50 p-3 text-sm">
          <Decision result={evaluate.data} />
          <Trail result={evaluate.data} />
        </div>
      ) : null}
    </section>
  );
}
