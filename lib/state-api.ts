// Thread-state reads for the console (state.history, state.get, state.diff). A
// server without them (older than thread-state history) is reported as such
// rather than as a broken page.
"use client";
import { useQuery } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/router";
import { useTRPC } from "./trpc";

type StateOutputs = inferRouterOutputs<AppRouter>["state"];
export type StateDiff = StateOutputs["diff"];
export type JsonPatchOperation = StateDiff["operations"][number];
export type StateKeyChange = StateDiff["keys"][number];

/** True when the server has no such procedure. */
export function isMissingProcedure(error: unknown): boolean {
  return error instanceof TRPCClientError && /No procedure found on path/i.test(error.message);
}

const retry = (failures: number, error: unknown) => !isMissingProcedure(error) && !(error instanceof TRPCClientError && (error.data as { httpStatus?: number } | undefined)?.httpStatus === 404) && failures < 2;

export function useStateHistory(taskId: string) {
  const trpc = useTRPC();
  return useQuery(trpc.state.history.queryOptions({ taskId }, { retry }));
}

export function useStateDiff(taskId: string, fromVersion: number | null, toVersion: number | null) {
  const trpc = useTRPC();
  return useQuery(
    trpc.state.diff.queryOptions(
      { taskId, fromVersion: fromVersion ?? 0, toVersion: toVersion ?? 0 },
      { enabled: fromVersion !== null && toVersion !== null && fromVersion !== toVersion, retry },
    ),
  );
}

/** The whole state at one version (for before/after values in a diff). Versions never change once saved. */
export function useStateVersion(taskId: string, version: number | null) {
  const trpc = useTRPC();
  return useQuery(trpc.state.get.queryOptions({ taskId, version: version ?? 1 }, { enabled: version !== null && version >= 1, staleTime: Infinity, retry }));
}
