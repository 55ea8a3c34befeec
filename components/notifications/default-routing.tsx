"use client";
// Who the workspace default asks, when it escalates and reminds: the routing of
// every approval no rule routes. The default's timeout is kept as it is.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading } from "../ui";
import { RouteFields } from "./route-fields";
import { describeRoute } from "./describe-route";
import { routeFormFrom, routeFromForm, type Route } from "./route-form";

export function DefaultRouting({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const defaults = useQuery(trpc.policy.defaults.queryOptions());
  const [form, setForm] = useState<ReturnType<typeof routeFormFrom> | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const save = useMutation(
    trpc.policy.setDefaults.mutationOptions({
      onSuccess: () => {
        setError(undefined);
        setSaved(true);
      },
      onError: (failure) => setError(errorMessage(failure)),
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.policy.defaults.queryKey() }),
    }),
  );
  if (defaults.isPending) return <Loading />;
  if (defaults.error) return <ErrorNote title="Could not load the workspace default" error={defaults.error} />;
  const route = defaults.data.route as Route | null;
  const current = form ?? routeFormFrom(route);
  return (
    <div className="space-y-2">
      <p className="text-sm" data-testid="default-route" role={saved ? "status" : undefined}>
        {saved ? "Saved. " : ""}
        {route ? `The default ${describeRoute(route)}.` : "The default asks everyone who can decide, on every enabled channel, without escalation."}
      </p>
      {canEdit ? (
        <form
          noValidate
          aria-label="Default routing"
          className="space-y-2"
          onSubmit={(event) => {
            event.preventDefault();
            const built = routeFromForm(current);
            if (!built.ok) return setError(built.error);
            save.mutate({ timeoutMs: defaults.data.timeoutMs, onTimeout: defaults.data.onTimeout, route: built.route });
          }}
        >
          <RouteFields
            form={current}
            onChange={(next) => {
              setSaved(false);
              setForm(next);
            }}
            error={error}
          />
          <button type="submit" disabled={save.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50">
            {save.isPending ? "Saving…" : "Save default routing"}
          </button>
        </form>
      ) : null}
    </div>
  );
}
