"use client";
// How rules read tool and agent names, and the one setting about them: whether
// a name may mix scripts (off by default, as look-alike names mix them).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading } from "../ui";

export function NameSettings({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.workspace.settings.queryOptions());
  const save = useMutation(
    trpc.workspace.updateSettings.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.workspace.settings.queryKey() }) }),
  );
  return (
    <section aria-labelledby="names-title" className="space-y-2 rounded border border-slate-200 bg-white p-4">
      <h2 id="names-title" className="text-sm font-semibold">
        Tool and agent names
      </h2>
      <p className="text-xs text-slate-600">
        Rules compare names ignoring case, width and accent encoding: <code className="font-mono">SEND_Email</code>, or the same in fullwidth letters, meets
        the rule for <code className="font-mono">send_email</code>. A name holding an invisible or control character is always refused; approvals show each name
        exactly as the agent sent it.
      </p>
      {settings.isPending ? (
        <Loading />
      ) : settings.error ? (
        <ErrorNote title="Could not load the settings" error={settings.error} />
      ) : (
        <label className="flex items-start gap-2 text-sm">
          <input
            type="checkbox"
            className="mt-1"
            checked={settings.data.allowMixedScriptNames}
            disabled={!canEdit || save.isPending}
            onChange={(event) => save.mutate({ allowMixedScriptNames: event.target.checked })}
          />
          <span>
            Allow names that mix scripts
            <span className="block text-xs text-slate-600">Off: a name such as “sеnd_email” with a Cyrillic е is refused, naming the letter.</span>
          </span>
        </label>
      )}
      {save.error ? (
        <p role="alert" className="text-sm text-red-700">
          Not changed: {errorMessage(save.error)}
        </p>
      ) : null}
    </section>
  );
}
