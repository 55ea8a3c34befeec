"use client";
// The tab's title carries the number of pending approvals, so an operator
// working in another tab sees that something waits: "(3) Tollgate".
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useTRPC } from "@/lib/trpc";

export function PendingTitle() {
  const trpc = useTRPC();
  const pending = useQuery(trpc.approval.list.queryOptions({ status: "PENDING", limit: 1 }));
  const base = useRef<string | null>(null);
  const total = pending.data?.total;
  useEffect(() => {
    base.current ??= document.title.replace(/^\(\d+\) /, "");
    document.title = total ? `(${total}) ${base.current}` : base.current;
  }, [total]);
  useEffect(
    () => () => {
      if (base.current !== null) document.title = base.current;
    },
    [],
  );
  return null;
}
