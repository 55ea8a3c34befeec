// Thread-state procedures (state.history, state.diff) for the console. They are
// being added to the server separately (issue 5), so they are called through the
// untyped client proxy with their documented shapes, and a server without them is
// reported as such rather than as a broken page.
"use client";
import { useQuery } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { useTRPCClient } from "./trpc";

export type StateOwner = "AGENT" | "MEMORY" | "ORCHESTRATOR" | "SHARED";

export interface StateVersion {
  version: number;
  requestId: string | null;
  createdAt: string;
  sizeBytes: number;
}

export interface StateHistory {
  taskId: string;
  versions: StateVersion[];
}

export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

export interface StateKeyChange {
  key: string;
  change: "added" | "removed" | "changed";
  owner: StateOwner | null;
  protocol?: string | null;
}

export interface StateDiff {
  taskId: string;
  fromVersion: number;
  toVersion: number;
  operations: JsonPatchOperation[];
  keys: StateKeyChange[];
}

interface UntypedQuery<I, O> {
  query(input: I): Promise<O>;
}
interface StateProcedures {
  state: {
    history: UntypedQuery<{ taskId: string }, StateHistory>;
    diff: UntypedQuery<{ taskId: string; fromVersion: number; toVersion: number }, StateDiff>;
  };
}

/** True when the server has no such procedure (an older build without state history). */
export function isMissingProcedure(error: unknown): boolean {
  return error instanceof TRPCClientError && /No procedure found on path/i.test(error.message);
}

export const stateKeys = {
  all: ["state"] as const,
  history: (taskId: string) => ["state", "history", taskId] as const,
  diff: (taskId: string, from: number, to: number) => ["state", "diff", taskId, from, to] as const,
};

export function useStateHistory(taskId: string) {
  const client = useTRPCClient() as unknown as StateProcedures;
  return useQuery({
    queryKey: stateKeys.history(taskId),
    queryFn: () => client.state.history.query({ taskId }),
    retry: (failures, error) => !isMissingProcedure(error) && failures < 2,
  });
}

export function useStateDiff(taskId: string, fromVersion: number | null, toVersion: number | null) {
  const client = useTRPCClient() as unknown as StateProcedures;
  return useQuery({
    queryKey: stateKeys.diff(taskId, fromVersion ?? -1, toVersion ?? -1),
    queryFn: () => client.state.diff.query({ taskId, fromVersion: fromVersion!, toVersion: toVersion! }),
    enabled: fromVersion !== null && toVersion !== null && fromVersion !== toVersion,
    retry: (failures, error) => !isMissingProcedure(error) && failures < 2,
  });
}
