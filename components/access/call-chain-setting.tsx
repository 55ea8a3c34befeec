"use client";
// Whether an agent key may begin work under another key's request without a
// delegation token from that key: the behaviour before tokens, kept for a
// transition (off for new workspaces).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export function CallChainSetting({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.workspace.settings.queryOptions());
  const save = useMutation(
    trpc.workspace.updateSettings.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.workspace.settings.queryKey() }) }),
  );
  if (!settings.data) return null;
  return (
    <div className="space-y-1 rounded border border-slate-200 bg-white p-3">
      <label className="flex items-start gap-2 text-sm">
        <input
          type="checkbox"
          className="mt-1"
          checked={settings.data.allowUndelegatedChildren}
          disabled={!canEdit || save.isPending}
          onChange={(event) => save.mutate({ allowUndelegatedChildren: event.target.checked })}
          aria-describedby="undelegated-children-note"
        />
        <span>Any key may begin work under another key&apos;s request</span>
      </label>
      <p id="undelegated-children-note" className="text-xs text-slate-600">
        Off: an agent called by another service names its caller&apos;s request as its parent only with the delegation token the caller&apos;s key made for it
        (the SDK&apos;s <code className="font-mono">request.delegate()</code>), so a key nobody called cannot attach work to your request and pause it. On: the
        behaviour before tokens, for agents not yet passing them.
      </p>
      {save.error ? (
        <p role="alert" className="text-sm text-red-700">
          Not changed: {errorMessage(save.error)}
        </p>
      ) : null}
    </div>
  );
}
