"use client";
// Sessions with their task status counts and pending approvals.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";

export function SessionList() {
  const trpc = useTRPC();
  const sessions = useQuery(trpc.session.list.queryOptions({}));
  if (sessions.isPending) return <p className="text-sm text-slate-500">Loading sessions…</p>;
  if (sessions.error) return <p role="alert" className="text-sm text-red-700">Could not load sessions: {sessions.error.message}</p>;
  if (sessions.data.items.length === 0) {
    return <p className="text-sm text-slate-500">No sessions yet. Agents open one with session.open.</p>;
  }
  return (
    <table className="w-full text-left text-sm" aria-label="Sessions">
      <thead className="text-xs uppercase text-slate-500">
        <tr>
          <th className="py-2">Session</th>
          <th>Started</th>
          <th>Running</th>
          <th>Paused</th>
          <th>Completed</th>
          <th>Pending approvals</th>
        </tr>
      </thead>
      <tbody>
        {sessions.data.items.map((session) => (
          <tr key={session.id} className="border-t border-slate-200">
            <td className="py-2 font-mono text-xs">{session.title ?? session.id}</td>
            <td>{new Date(session.createdAt).toLocaleString()}</td>
            <td>{session.taskCounts.RUNNING}</td>
            <td>{session.taskCounts.PAUSED}</td>
            <td>{session.taskCounts.COMPLETED}</td>
            <td>{session.pendingApprovals}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
