"use client";
// Sessions with their task status counts and pending approvals, newest first, live.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { Empty, ErrorNote, Loading, StatusBadge } from "./ui";

const COUNTED = ["RUNNING", "PAUSED", "COMPLETED", "FAILED", "CANCELED"] as const;

export function SessionList() {
  const trpc = useTRPC();
  const sessions = useQuery(trpc.session.list.queryOptions({ limit: 500 }));
  if (sessions.isPending) return <Loading>Loading sessions…</Loading>;
  if (sessions.error) return <ErrorNote title="Could not load sessions" error={sessions.error} />;
  if (sessions.data.items.length === 0) {
    return <Empty>No sessions yet. Agents open one with session.open; it appears here live.</Empty>;
  }
  return (
    <table className="w-full table-fixed text-left text-sm" aria-label="Sessions">
      <thead className="text-xs uppercase text-slate-500">
        <tr>
          <th className="w-[28%] py-2">Session</th>
          <th className="w-20">Status</th>
          <th className="w-44">Started</th>
          {COUNTED.map((status) => (
            <th key={status} className="text-right">
              {status.toLowerCase()}
            </th>
          ))}
          <th className="text-right">Pending approvals</th>
        </tr>
      </thead>
      <tbody>
        {sessions.data.items.map((session) => (
          <tr key={session.id} className={`border-t border-slate-200 ${session.pendingApprovals > 0 ? "bg-amber-50" : "bg-white"}`}>
            <td className="truncate py-2">
              <Link href={`/sessions/${session.id}`} className="font-medium underline decoration-slate-300 hover:decoration-slate-900">
                {session.title || "Untitled session"}
              </Link>
            </td>
            <td>
              <StatusBadge status={session.status} />
            </td>
            <td className="tabular-nums">{formatTime(session.createdAt)}</td>
            {COUNTED.map((status) => (
              <td key={status} className={`text-right tabular-nums ${!session.taskCounts[status] ? "text-slate-300" : status === "PAUSED" ? "font-semibold text-amber-800" : status === "FAILED" ? "font-semibold text-red-700" : ""}`}>
                {session.taskCounts[status] ?? 0}
              </td>
            ))}
            <td className="text-right tabular-nums">
              {session.pendingApprovals > 0 ? (
                <Link href={`/?session=${session.id}`} className="font-semibold text-amber-900 underline">
                  {session.pendingApprovals} waiting
                </Link>
              ) : (
                <span className="text-slate-300">0</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
