"use client";
// The workspace's operators and the groups routing can ask by name.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading } from "../ui";

function GroupsEditor({ operatorId, email, groups }: { operatorId: string; email: string; groups: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [text, setText] = useState(groups.join(", "));
  const save = useMutation(trpc.operator.setGroups.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.operator.list.queryKey() }) }));
  return (
    <form
      className="flex min-w-0 flex-wrap items-center gap-2"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate({ operatorId, groups: text.split(/[,\s]+/).filter(Boolean) });
      }}
    >
      <input aria-label={`Groups of ${email}`} value={text} onChange={(event) => setText(event.target.value)} placeholder="finance, on-call" className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1 text-sm" />
      <button type="submit" disabled={save.isPending} className="rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100 disabled:opacity-50">
        Save
      </button>
      {save.error ? <span className="w-full text-xs text-red-700">{errorMessage(save.error)}</span> : save.isSuccess ? <span className="text-xs text-emerald-800">saved</span> : null}
    </form>
  );
}

export function PeopleAndGroups({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const people = useQuery(trpc.operator.list.queryOptions());
  if (people.isPending) return <Loading />;
  if (people.error) return <ErrorNote title="Could not load the operators" error={people.error} />;
  return (
    <ul className="divide-y divide-slate-200 rounded border border-slate-200 bg-white" aria-label="Operators">
      {people.data.items.map((person) => (
        <li key={person.id} className="grid grid-cols-1 gap-1 p-3 sm:grid-cols-[minmax(0,1fr)_minmax(0,1fr)] sm:items-center">
          <div className="min-w-0">
            <p className="truncate text-sm font-medium">{person.email}</p>
            <p className="text-xs text-slate-500">
              {person.role.toLowerCase()}
              {person.disabled ? " · disabled" : ""}
              {person.role === "VIEWER" ? " · never asked (cannot decide)" : ""}
            </p>
          </div>
          {canEdit ? <GroupsEditor operatorId={person.id} email={person.email} groups={person.groups} /> : <p className="text-sm text-slate-700">{person.groups.join(", ") || "no groups"}</p>}
        </li>
      ))}
    </ul>
  );
}
