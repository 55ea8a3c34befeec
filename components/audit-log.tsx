"use client";
// The audit log: every decision and administrative action, newest first,
// filterable by action, actor and subject, with the hash-chain verdict on top.
import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import { formatTime } from "@/lib/format";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import type { AuditItem } from "@/lib/types";
import { compactJson, Empty, ErrorNote, Loading } from "./ui";

const ACTIONS = [
  { value: "", label: "All actions" },
  { value: "approval.", label: "Approvals (all)" },
  { value: "approval.decided", label: "Approval decided" },
  { value: "approval.expired", label: "Approval expired" },
  { value: "approval.canceled", label: "Approval canceled" },
  { value: "task.", label: "Tasks" },
  { value: "operator.", label: "Operators and logins" },
  { value: "agent_key.", label: "Agent keys" },
  { value: "workspace.", label: "Workspace" },
];
const PAGE = 100;

function ChainStatus() {
  const trpc = useTRPC();
  const verify = useQuery(trpc.audit.verify.queryOptions(undefined, { staleTime: 10_000 }));
  if (verify.isPending) {
    return (
      <div role="status" aria-label="Hash chain" className="h-14 rounded border border-slate-200 bg-white p-3 text-sm text-slate-500">
        Verifying the hash chain…
      </div>
    );
  }
  if (verify.error) return <ErrorNote title="Could not verify the hash chain" error={verify.error} />;
  const verdict = verify.data;
  return verdict.ok ? (
    <div role="status" aria-label="Hash chain" className="h-14 rounded border border-emerald-300 bg-emerald-50 p-3 text-sm text-emerald-950">
      <span className="font-semibold">✓ Hash chain intact:</span> all {verdict.checked} entries verified; none was altered or removed.
    </div>
  ) : (
    <div role="alert" aria-label="Hash chain" className="rounded border border-red-400 bg-red-50 p-3 text-sm text-red-900">
      <span className="font-semibold">✗ Hash chain broken at entry #{verdict.brokenAtSeq}:</span> {verdict.reason}. Entries from #{verdict.brokenAtSeq} on cannot be trusted; checked{" "}
      {verdict.checked}. Investigate the database before relying on this log.
    </div>
  );
}

function subjectHref(item: AuditItem): string | null {
  if (item.subjectType === "approval") return `/approvals/${item.subjectId}`;
  if (item.subjectType === "session") return `/sessions/${item.subjectId}`;
  return null;
}

export function AuditLog() {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const params = useSearchParams();
  const [action, setAction] = useState(params.get("action") ?? "");
  const [actor, setActor] = useState(params.get("actor") ?? "");
  const [subjectId, setSubjectId] = useState(params.get("subject") ?? "");
  const [applied, setApplied] = useState({ actor: actor.trim(), subjectId: subjectId.trim() });

  useEffect(() => {
    const timer = setTimeout(() => setApplied({ actor: actor.trim(), subjectId: subjectId.trim() }), 250);
    return () => clearTimeout(timer);
  }, [actor, subjectId]);

  useEffect(() => {
    const next = new URLSearchParams();
    if (action) next.set("action", action);
    if (applied.actor) next.set("actor", applied.actor);
    if (applied.subjectId) next.set("subject", applied.subjectId);
    const query = next.toString();
    window.history.replaceState(null, "", `${window.location.pathname}${query ? `?${query}` : ""}`);
  }, [action, applied]);

  const filter = { ...(action ? { action } : {}), ...(applied.actor ? { actor: applied.actor } : {}), ...(applied.subjectId ? { subjectId: applied.subjectId } : {}) };
  const entries = useInfiniteQuery({
    // Under the audit router's key, so live invalidation of "audit" reaches it.
    queryKey: [[...trpc.audit.list.pathKey()[0], "list"], { input: filter, type: "infinite" }],
    queryFn: ({ pageParam }) => client.audit.list.query({ ...filter, limit: PAGE, ...(pageParam ? { beforeSeq: pageParam } : {}) }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBeforeSeq ?? undefined,
    placeholderData: keepPreviousData,
  });
  const items = entries.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <div className="space-y-4">
      <h1 className="text-lg font-semibold">Audit log</h1>
      <ChainStatus />
      <div className="flex flex-wrap items-center gap-2 text-sm" role="group" aria-label="Audit filters">
        <select aria-label="Filter by action" value={action} onChange={(event) => setAction(event.target.value)} className="rounded border border-slate-300 px-2 py-1">
          {ACTIONS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
        <input aria-label="Filter by actor" placeholder="Actor (email contains)" value={actor} onChange={(event) => setActor(event.target.value)} className="w-56 rounded border border-slate-300 px-2 py-1" />
        <input aria-label="Filter by subject id" placeholder="Subject id (apr_…, tsk_…)" value={subjectId} onChange={(event) => setSubjectId(event.target.value)} className="w-56 rounded border border-slate-300 px-2 py-1 font-mono text-xs" />
        <button
          type="button"
          disabled={!action && !actor && !subjectId}
          onClick={() => {
            setAction("");
            setActor("");
            setSubjectId("");
          }}
          className="rounded px-2 py-1 text-slate-600 hover:bg-slate-100 disabled:opacity-40"
        >
          Clear filters
        </button>
      </div>

      {entries.isPending ? (
        <Loading>Loading the audit log…</Loading>
      ) : entries.error ? (
        <ErrorNote title="Could not load the audit log" error={entries.error} />
      ) : items.length === 0 ? (
        <Empty>No audit entries match these filters.</Empty>
      ) : (
        <table className="w-full table-fixed border-collapse bg-white text-left text-xs" aria-label="Audit entries">
          <thead className="sticky top-0 bg-slate-100 text-slate-600">
            <tr>
              <th className="w-14 px-2 py-1.5">#</th>
              <th className="w-36">Time</th>
              <th className="w-48">Actor</th>
              <th className="w-36">Action</th>
              <th className="w-52">Subject</th>
              <th>Details</th>
              <th className="w-24">Hash</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => {
              const href = subjectHref(item);
              return (
                <tr key={item.seq} className="border-t border-slate-100 align-top">
                  <td className="px-2 py-1.5 tabular-nums text-slate-500">{item.seq}</td>
                  <td className="py-1.5 tabular-nums">{formatTime(item.at)}</td>
                  <td className="truncate py-1.5" title={item.actor}>
                    <span className="mr-1 rounded bg-slate-100 px-1 text-[10px] uppercase text-slate-600">{item.actorType}</span>
                    {item.actor}
                  </td>
                  <td className="py-1.5 font-mono font-medium">{item.action}</td>
                  <td className="truncate py-1.5 font-mono" title={`${item.subjectType} ${item.subjectId}`}>
                    <span className="text-slate-500">{item.subjectType} </span>
                    {href ? (
                      <Link href={href} className="underline decoration-slate-300 hover:decoration-slate-900">
                        {item.subjectId}
                      </Link>
                    ) : (
                      item.subjectId
                    )}
                  </td>
                  <td className="truncate py-1.5 font-mono text-slate-700" title={JSON.stringify(item.data)}>
                    {compactJson(item.data, 200)}
                  </td>
                  <td className="py-1.5 font-mono text-slate-500" title={item.hash}>
                    {item.hash.slice(0, 10)}…
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {entries.hasNextPage ? (
        <button type="button" disabled={entries.isFetchingNextPage} onClick={() => void entries.fetchNextPage()} className="rounded border border-slate-300 bg-white px-3 py-1 text-sm">
          {entries.isFetchingNextPage ? "Loading…" : "Load older entries"}
        </button>
      ) : null}
    </div>
  );
}
