"use client";
// Ending the work of an agent that stopped waiting: the operator says why, and
// chooses how far up the call chain to cancel. By default only the agent's own
// task ends; its parents (which may well be alive) go on, resumed once their
// child is canceled, unless the operator picks one of them.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";

export function CancelTask({ approval }: { approval: ApprovalItem }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [taskId, setTaskId] = useState(approval.taskId);
  const chain = useQuery({ ...trpc.request.get.queryOptions({ requestId: approval.requestId }), enabled: open });
  const cancel = useMutation(trpc.task.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.approval.pathKey() }) }));
  // The tasks above this one that still run, outermost first.
  const parents = [...new Map((chain.data?.chain ?? []).filter((link) => link.taskId !== approval.taskId && (link.status === "RUNNING" || link.status === "PAUSED")).map((link) => [link.taskId, link])).values()];

  if (cancel.isSuccess) {
    return (
      <p data-testid="task-canceled" className="text-xs font-medium">
        Canceled{taskId === approval.taskId ? ` ${approval.agent}'s task` : " from the chosen parent down"}: {reason.trim()}
      </p>
    );
  }
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} className="rounded border border-amber-600 bg-white px-2 py-1 text-xs font-medium hover:bg-amber-100">
        Cancel {approval.agent}&apos;s task…
      </button>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (reason.trim()) cancel.mutate({ taskId, reason: reason.trim() });
  };
  return (
    <form onSubmit={submit} aria-label={`Cancel ${approval.agent}'s task`} className="space-y-2 rounded border border-amber-300 bg-white p-2 text-xs">
      <label className="block">
        <span className="font-medium">Why (recorded on the approval and in the audit log)</span>
        <textarea
          required
          autoFocus
          rows={2}
          value={reason}
          onChange={(event) => setReason(event.target.value)}
          placeholder="The agent's process died during the deploy"
          className="mt-1 block w-full rounded border border-slate-300 px-2 py-1 text-sm"
        />
      </label>
      <fieldset className="space-y-1">
        <legend className="font-medium">What to cancel</legend>
        <label className="flex items-start gap-1.5">
          <input type="radio" name="cancel-scope" checked={taskId === approval.taskId} onChange={() => setTaskId(approval.taskId)} className="mt-0.5" />
          <span>
            Only {approval.agent}&apos;s task and what it started
            {parents.length ? <span className="block text-slate-600">Its parents go on: they are told the child was canceled and resume.</span> : null}
          </span>
        </label>
        {parents.map((link) => (
          <label key={link.taskId} className="flex items-start gap-1.5">
            <input type="radio" name="cancel-scope" checked={taskId === link.taskId} onChange={() => setTaskId(link.taskId)} className="mt-0.5" />
            <span>
              Also the parent {link.agent} ({link.status.toLowerCase()}) and everything below it
            </span>
          </label>
        ))}
      </fieldset>
      <div className="flex gap-2">
        <button type="submit" disabled={!reason.trim() || cancel.isPending} className="rounded bg-amber-700 px-2 py-1 font-medium text-white hover:bg-amber-800 disabled:opacity-50">
          {cancel.isPending ? "Canceling…" : "Cancel the task"}
        </button>
        <button type="button" onClick={() => setOpen(false)} className="rounded px-2 py-1 hover:bg-slate-100">
          Keep it
        </button>
      </div>
      {cancel.error ? <p className="text-red-700">{cancel.error.message}</p> : null}
    </form>
  );
}
