"use client";
// Which workspace the console is showing, always in view; a person in several
// switches here. Switching reloads the console in the other workspace.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { useSwitchWorkspace } from "./access/use-switch-workspace";

export function WorkspaceSwitcher() {
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions(undefined, { staleTime: 60_000 }));
  const switchTo = useSwitchWorkspace();
  const items = workspaces.data?.items ?? [];
  const current = items.find((workspace) => workspace.current);
  if (!current) return null;
  if (items.length === 1) {
    return (
      <span className="max-w-[12rem] truncate text-slate-600" title="Workspace" data-testid="workspace-name">
        {current.name}
      </span>
    );
  }
  return (
    <label className="flex items-center gap-1 text-slate-600">
      <span className="sr-only">Workspace</span>
      <select
        aria-label="Workspace"
        data-testid="workspace-switcher"
        value={current.id}
        disabled={switchTo.isPending}
        onChange={(event) => switchTo.mutate({ workspaceId: event.target.value })}
        className="max-w-[12rem] rounded border border-slate-300 bg-white px-1 py-0.5 text-sm text-slate-900"
      >
        {items.map((workspace) => (
          <option key={workspace.id} value={workspace.id}>
            {workspace.name}
          </option>
        ))}
      </select>
      {switchTo.error ? (
        <span role="alert" className="text-xs text-red-700">
          {switchTo.error.message}
        </span>
      ) : null}
    </label>
  );
}
