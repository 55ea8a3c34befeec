"use client";
// Starter rules for MCP servers, offered to an admin while the workspace has
// no rules: shown in words, written only when the admin clicks, never by
// themselves. Both rely on a tool's hints only for tools an admin pinned.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import { describeMatch, describeOutcome } from "./describe";
import type { PolicyInput } from "./rule-form";

export const STARTER_RULES: PolicyInput[] = [
  {
    name: "Pinned read-only MCP tools are approved",
    description: "A tool an admin pinned (policy.pinTool), still listed exactly so by its server, that says it only reads.",
    match: { pinned: true, annotations: { readOnlyHint: true } },
    outcome: "approve",
  },
  {
    name: "Pinned destructive MCP tools need an admin",
    description: "A pinned tool that says it is destructive, or says nothing (MCP's default).",
    match: { pinned: true, annotations: { destructiveHint: true } },
    outcome: "require",
    role: "ADMIN",
  },
];

const asStored = (rule: PolicyInput) => ({ role: "OPERATOR" as const, approvers: 1, allow: [], timeoutMs: null, onTimeout: "reject" as const, allowApproveOnTimeout: false, message: null, ...rule });

export function StarterRules() {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  // One after the other, in the order shown, so they keep that order among the rules.
  const apply = useMutation({
    mutationFn: async () => {
      for (const rule of STARTER_RULES) await client.policy.create.mutate(rule);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.policy.pathKey() }),
  });

  return (
    <section aria-labelledby="starter-title" className="space-y-2 rounded border border-slate-300 bg-white p-3">
      <h3 id="starter-title" className="text-sm font-semibold">
        Starter rules for MCP servers
      </h3>
      <p className="text-sm text-slate-600">
        Calls through tollgate-mcp carry their tool&apos;s hints, which the server writes itself. These rules trust them only for tools you pinned; nothing is added until you click.
      </p>
      <ol className="space-y-1 text-sm">
        {STARTER_RULES.map((rule) => (
          <li key={rule.name} className="rounded bg-slate-50 p-2">
            <span className="font-medium">{rule.name}</span>
            <span className="block text-xs text-slate-600">
              {describeMatch(rule.match ?? {}).join(", ")}. {describeOutcome(asStored(rule))}.
            </span>
          </li>
        ))}
      </ol>
      {apply.error ? <p role="alert" className="text-sm text-red-700">{apply.error.message}</p> : null}
      <button
        type="button"
        disabled={apply.isPending}
        onClick={() => apply.mutate()}
        className="rounded border border-slate-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-slate-100 disabled:opacity-50"
      >
        {apply.isPending ? "Adding…" : `Add these ${STARTER_RULES.length} rules`}
      </button>
    </section>
  );
}
