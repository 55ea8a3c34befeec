"use client";
// The MCP tool a call through tollgate-mcp came with, as its server listed it
// at the call, and whether an admin has pinned it. An admin pins it from
// here after reading exactly what the pin covers (its hash and description);
// rules with `pinned: true` then match its calls while the server lists it so.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";
import { useOperator } from "../app-shell";

type McpTool = NonNullable<ApprovalItem["mcpTool"]>;

export function McpToolSection({ approval, tool }: { approval: ApprovalItem; tool: McpTool }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const operator = useOperator();
  const isAdmin = operator.role === "ADMIN";
  const [confirming, setConfirming] = useState(false);
  const pins = useQuery(trpc.policy.pins.queryOptions());
  const pin = useMutation(
    trpc.policy.pinToolFromApproval.mutationOptions({
      onSuccess: () => {
        setConfirming(false);
        return queryClient.invalidateQueries({ queryKey: trpc.policy.pins.queryKey() });
      },
    }),
  );
  const pinned = pins.data?.items.find((item) => item.agent === approval.agent && item.tool === tool.name && item.sha256 === tool.sha256);

  return (
    <section aria-labelledby="mcp-tool-heading" data-testid="mcp-tool" className="rounded border border-slate-200 bg-white p-3 text-sm">
      <h3 id="mcp-tool-heading" className="text-xs font-semibold uppercase tracking-wide text-slate-500">
        MCP tool, as the server listed it
      </h3>
      <p className="mt-1 min-w-0 break-words">
        <code className="font-mono">{tool.name}</code> of the server <span className="font-medium">{approval.agent}</span>
        {pinned ? (
          <span data-testid="mcp-tool-pinned" className="ml-2 inline-block rounded bg-emerald-100 px-1.5 text-xs font-semibold text-emerald-900">
            pinned by {pinned.pinnedBy}
          </span>
        ) : (
          <span className="ml-2 inline-block rounded bg-slate-100 px-1.5 text-xs text-slate-700">not pinned</span>
        )}
      </p>
      {isAdmin && !pinned && !confirming ? (
        <button type="button" onClick={() => setConfirming(true)} className="mt-2 rounded border border-slate-400 bg-white px-2 py-1 text-xs font-medium hover:bg-slate-100">
          Pin this tool…
        </button>
      ) : null}
      {isAdmin && !pinned && confirming ? (
        <div role="group" aria-label="Pin this tool" className="mt-2 space-y-2 rounded border border-slate-300 bg-slate-50 p-2 text-xs">
          <p>
            Rules with “only tools an admin pinned” will match calls of <code className="font-mono">{tool.name}</code> by <span className="font-medium">{approval.agent}</span> while the
            server lists the tool exactly as here: this name, description, annotations and input schema.
          </p>
          <dl className="grid grid-cols-1 gap-x-2 sm:grid-cols-[6rem_minmax(0,1fr)] sm:gap-y-1">
            <dt className="text-slate-500">SHA-256</dt>
            <dd data-testid="pin-sha256" className="min-w-0 break-all font-mono">
              {tool.sha256}
            </dd>
            <dt className="text-slate-500">Description</dt>
            <dd data-testid="pin-description" className="min-w-0 whitespace-pre-wrap break-words">
              {tool.description ?? <span className="text-slate-500">none given</span>}
            </dd>
          </dl>
          <div className="flex gap-2">
            <button
              type="button"
              disabled={pin.isPending}
              onClick={() => pin.mutate({ approvalId: approval.approvalId, sha256: tool.sha256 })}
              className="rounded bg-slate-900 px-2 py-1 font-medium text-white hover:bg-slate-700 disabled:opacity-50"
            >
              {pin.isPending ? "Pinning…" : `Pin ${tool.name}`}
            </button>
            <button type="button" onClick={() => setConfirming(false)} className="rounded px-2 py-1 hover:bg-slate-100">
              Not now
            </button>
          </div>
          {pin.error ? <p role="alert" className="text-red-700">{pin.error.message}</p> : null}
        </div>
      ) : null}
    </section>
  );
}
