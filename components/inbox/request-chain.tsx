"use client";
// The chain of requests from the client's end down to the paused agent that
// asked for this approval: who is waiting on whom, what each was asked, and the
// session (the conversation or ticket) they all belong to.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/lib/trpc";
import { ErrorNote, Loading, StatusBadge } from "../ui";

export function RequestChain({ requestId, sessionId, pending }: { requestId: string; sessionId: string; pending: boolean }) {
  const trpc = useTRPC();
  const chain = useQuery(trpc.request.get.queryOptions({ requestId }));
  if (chain.isPending) return <Loading>Loading the call chain…</Loading>;
  if (chain.error) return <ErrorNote title="Could not load the call chain" error={chain.error} />;
  const { chain: links, session } = chain.data;
  return (
    <div className="space-y-1 text-sm">
      <p data-testid="chain-session" className="min-w-0 truncate text-slate-600">
        Session{" "}
        <Link href={`/sessions/${sessionId}`} title={session.title ?? sessionId} className="font-medium text-slate-900 underline decoration-slate-300 hover:decoration-slate-900">
          {session.title ?? sessionId}
        </Link>
      </p>
      <ol aria-label="Call chain from the client to the paused agent" className="space-y-0.5">
        {links.map((link, index) => {
          const last = index === links.length - 1;
          return (
            <li key={link.requestId} className="flex min-w-0 items-baseline gap-2" style={{ paddingLeft: `${index * 14}px` }}>
              <span className="shrink-0 text-slate-400" aria-hidden>
                {index === 0 ? "●" : "└"}
              </span>
              <Link
                href={`/sessions/${sessionId}?task=${link.taskId}`}
                title={link.requestId}
                className="shrink-0 font-medium text-slate-900 underline decoration-slate-300 hover:decoration-slate-900"
              >
                {link.agent}
              </Link>
              <span className="min-w-0 flex-1 truncate text-xs text-slate-600" title={link.inputSummary ?? undefined}>
                {link.inputSummary ?? <span className="text-slate-400">no input recorded</span>}
              </span>
              {last ? (
                <span className="shrink-0 text-xs font-medium text-amber-800">{pending ? "waits for this" : "asked for this"}</span>
              ) : (
                <StatusBadge status={link.status} />
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
