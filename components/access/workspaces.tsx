"use client";
// The person's workspaces, and for admins a new one: its creator becomes its
// first admin and adds its agent keys and people from this page once switched in.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading } from "../ui";
import { useSwitchWorkspace } from "./use-switch-workspace";

const ROLE_LABEL = { ADMIN: "Admin", OPERATOR: "Approver", VIEWER: "Viewer" } as const;

export function Workspaces({ isAdmin }: { isAdmin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const create = useMutation(trpc.workspace.create.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.workspace.list.queryKey() }) }));
  const switchTo = useSwitchWorkspace();
  const [name, setName] = useState("");

  return (
    <section aria-labelledby="workspaces-title" className="min-w-0 space-y-3">
      <h2 id="workspaces-title" className="text-sm font-semibold">
        Workspaces
      </h2>
      {isAdmin ? (
        <form
          aria-label="New workspace"
          className="flex flex-wrap items-end gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate({ name: name.trim() }, { onSuccess: () => setName("") });
          }}
        >
          <label className="flex min-w-0 flex-1 flex-col text-xs text-slate-600">
            Name
            <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} placeholder="Payments team" className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
          </label>
          <button type="submit" disabled={create.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50">
            Create workspace
          </button>
          {create.error ? (
            <p role="alert" className="w-full text-sm text-red-700">
              {errorMessage(create.error)}
            </p>
          ) : null}
          {create.data ? (
            <p role="status" className="w-full text-sm text-emerald-800">
              Created &ldquo;{create.data.name}&rdquo;; you are its admin. Switch to it to add its agent keys and people.
            </p>
          ) : null}
        </form>
      ) : null}
      {workspaces.isPending ? <Loading /> : null}
      {workspaces.error ? <ErrorNote title="Could not load your workspaces" error={workspaces.error} /> : null}
      {switchTo.error ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(switchTo.error)}
        </p>
      ) : null}
      {workspaces.data ? (
        <ul className="divide-y divide-slate-100 rounded border border-slate-200 bg-white text-sm">
          {workspaces.data.items.map((workspace) => (
            <li key={workspace.id} className="flex flex-wrap items-center justify-between gap-2 px-3 py-2">
              <span className="min-w-0 break-words">
                <span className="font-medium">{workspace.name}</span> <span className="text-slate-500">· {ROLE_LABEL[workspace.role]}</span>
              </span>
              {workspace.current ? (
                <span className="text-xs text-slate-500">You are here</span>
              ) : (
                <button
                  type="button"
                  disabled={switchTo.isPending}
                  onClick={() => switchTo.mutate({ workspaceId: workspace.id })}
                  className="rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100 disabled:opacity-50"
                >
                  Switch to {workspace.name}
                </button>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
