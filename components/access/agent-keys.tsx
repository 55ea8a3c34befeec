"use client";
// The workspace's agent keys: name, prefix, last use, status; admins create
// (shown once) and revoke (after a confirm).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { Empty, ErrorNote, Loading } from "../ui";
import { CallChainSetting } from "./call-chain-setting";
import { ShownOnce } from "./shown-once";

export function AgentKeys({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.agentKey.list.queryOptions());
  const settle = { onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.agentKey.list.queryKey() }) };
  const create = useMutation(trpc.agentKey.create.mutationOptions(settle));
  const revoke = useMutation(trpc.agentKey.revoke.mutationOptions(settle));
  const [name, setName] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);

  return (
    <section aria-labelledby="keys-title" className="min-w-0 space-y-3">
      <h2 id="keys-title" className="text-sm font-semibold">
        Agent keys
      </h2>
      {create.data ? <ShownOnce label={`New agent key "${create.data.name}"`} secret={create.data.key} onDone={() => create.reset()} /> : null}
      {canEdit ? (
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate({ name: name.trim() }, { onSuccess: () => setName("") });
          }}
        >
          <label className="flex min-w-0 flex-1 flex-col text-xs text-slate-600">
            Name (what runs with it)
            <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} placeholder="billing agents" className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
          </label>
          <button type="submit" disabled={create.isPending || !name.trim()} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50">
            Create key
          </button>
        </form>
      ) : null}
      {create.error || revoke.error ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(create.error ?? revoke.error)}
        </p>
      ) : null}
      {keys.isPending ? (
        <Loading />
      ) : keys.error ? (
        <ErrorNote title="Could not load the agent keys" error={keys.error} />
      ) : keys.data.items.length === 0 ? (
        <Empty>No agent keys.</Empty>
      ) : (
        <ul aria-label="Agent keys" className="space-y-2">
          {keys.data.items.map((key) => (
            <li key={key.id} data-testid="agent-key" className="flex flex-wrap items-start justify-between gap-2 rounded border border-slate-200 bg-white p-3">
              <div className="min-w-0 space-y-0.5 text-sm">
                <p className="font-semibold break-words">
                  {key.name}
                  {key.revokedAt ? <span className="ml-2 rounded bg-red-100 px-1.5 text-xs font-medium text-red-800">revoked</span> : null}
                </p>
                <p className="font-mono text-xs text-slate-700">{key.keyPrefix}…</p>
                <p className="text-xs text-slate-500">
                  Created {formatTime(key.createdAt)} · {key.lastUsedAt ? `last used ${formatTime(key.lastUsedAt)}` : "never used"}
                  {key.revokedAt ? ` · revoked ${formatTime(key.revokedAt)}` : ""}
                  {key.trustedAgents.length ? ` · may act for ${key.trustedAgents.join(", ")}` : ""}
                </p>
              </div>
              {canEdit && !key.revokedAt ? (
                confirming === key.id ? (
                  <div role="alertdialog" aria-label={`Confirm revoking ${key.name}`} className="flex shrink-0 items-center gap-2 text-xs">
                    <span>Agents using it stop at once.</span>
                    <button type="button" onClick={() => revoke.mutate({ keyId: key.id }, { onSettled: () => setConfirming(null) })} className="rounded bg-red-700 px-2 py-1 font-medium text-white">
                      Yes, revoke
                    </button>
                    <button type="button" onClick={() => setConfirming(null)} className="rounded px-2 py-1 hover:bg-slate-100">
                      Back
                    </button>
                  </div>
                ) : (
                  <button type="button" onClick={() => setConfirming(key.id)} aria-label={`Revoke ${key.name}`} className="shrink-0 rounded border border-red-300 px-2 py-1 text-xs text-red-800">
                    Revoke
                  </button>
                )
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <CallChainSetting canEdit={canEdit} />
    </section>
  );
}
