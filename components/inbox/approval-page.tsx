"use client";
// A single approval by id; an unknown id shows the not-found page.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { notFound, useParams } from "next/navigation";
import { isNotFound } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ApprovalDetail } from "./approval-detail";

export function ApprovalPage() {
  const trpc = useTRPC();
  const { id } = useParams<{ id: string }>();
  const approval = useQuery(trpc.approval.get.queryOptions({ approvalId: id }));
  if (approval.error && isNotFound(approval.error)) notFound();
  return (
    <div className="mx-auto max-w-3xl space-y-3">
      <Link href={approval.data?.status === "PENDING" ? `/?approval=${id}` : `/?tab=history&approval=${id}`} className="text-sm text-slate-500 hover:text-slate-900">
        ← Inbox
      </Link>
      <div className="rounded border border-slate-200 bg-white p-5">
        <ApprovalDetail approvalId={id} />
      </div>
    </div>
  );
}
