"use client";
// The chain of requests from the client's end down to the paused agent that
// asked for this approval: who is waiting on whom.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading, StatusBadge } from "../ui";

export function RequestChain({ requestId, sessionId, pending }: { requestId: string; sessionId: string; pending: boolean }) {
  const trpc = useTRPC();
  const chain = useQuery(trpc.request.get.queryOptions({ requestId }));
  if (chain.isPending) return <Loading>Loading the call chain…</Loading>;
  if (chain.error) return <ErrorNote title="Could not load the call chain" error={chain.error} />;
  const links = chain.data.chain;
  return (
    <ol aria-label="Call chain from the client to the paused agent" className="space-y-1 text-sm">
      <li className="flex items-center gap-2 text-slate-500">
        <span className="inline-block w-4 text-center" aria-hidden>
          ●
        </span>
        Client
      </li>
      {links.map((link, index) => {
        const last = index === links.length - 1;
        return (
          <li key={link.requestId} className="flex items-center gap-2" style={{ paddingLeft: `${(index + 1) * 14}px` }}>
            <span className="text-slate-400" aria-hidden>
              └
            </span>
            <Link href={`/sessions/${sessionId}?task=${link.taskId}`} className="font-medium text-slate-900 underline decoration-slate-300 hover:decoration-slate-900">
              {link.agent}
            </Link>
            <span className="font-mono text-[11px] text-slate-500">{link.requestId}</span>
            <StatusBadge status={link.status} />
            {last ? <span className="text-xs font-medium text-amber-800">{pending ? "← waits for this approval" : "← asked for this approval"}</span> : null}
          </li>
        );
      })}
    </ol>
  );
}
