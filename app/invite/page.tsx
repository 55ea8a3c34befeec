"use client";
// Accepting an invitation: the link's token is in the fragment (#tgi_...), which
// the browser sends to no server. The person signs in with their Tollgate
// password if they have an account, or chooses one; the page never says which
// applies, so the link tells nobody whether an account exists.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { useTRPC } from "@/lib/trpc";

const ROLE_LABEL = { ADMIN: "an admin", OPERATOR: "an approver", VIEWER: "a viewer" } as const;

export default function InvitePage() {
  const trpc = useTRPC();
  const router = useRouter();
  const [token, setToken] = useState<string | null>(null);
  const [password, setPassword] = useState("");
  useEffect(() => setToken(window.location.hash.slice(1)), []);
  const invitation = useQuery({ ...trpc.auth.invitation.queryOptions({ token: token ?? "" }), enabled: Boolean(token), retry: false });
  const accept = useMutation(trpc.auth.acceptInvitation.mutationOptions({ onSuccess: () => router.replace("/") }));

  function submit(event: FormEvent) {
    event.preventDefault();
    if (token) accept.mutate({ token, password });
  }

  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <div className="w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-xl font-semibold">Tollgate invitation</h1>
        {token === null || (token && invitation.isPending) ? (
          <p className="text-sm text-slate-600">Reading the invitation…</p>
        ) : !token || invitation.error ? (
          <p role="alert" className="text-sm text-red-700">
            {invitation.error?.message ?? "This link holds no invitation."}
          </p>
        ) : invitation.data ? (
          <form onSubmit={submit} className="space-y-4">
            <p className="text-sm text-slate-700">
              Join <strong className="break-words">{invitation.data.workspaceName}</strong> as {ROLE_LABEL[invitation.data.role]}, signed in as{" "}
              <strong className="break-all">{invitation.data.email}</strong>.
            </p>
            <label className="block text-sm">
              <span className="font-medium">Password</span>
              <span className="block text-xs text-slate-600">Your Tollgate password if you have an account; if you are new, the one you choose (at least 8 characters).</span>
              <input
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
                className="mt-1 block w-full rounded border border-slate-300 px-3 py-2"
              />
            </label>
            {accept.error ? (
              <p role="alert" className="text-sm text-red-700">
                {accept.error.message}
              </p>
            ) : null}
            <button type="submit" disabled={accept.isPending} className="w-full rounded bg-slate-900 px-3 py-2 text-sm font-medium text-white disabled:opacity-60">
              {accept.isPending ? "Joining…" : "Join"}
            </button>
          </form>
        ) : null}
      </div>
    </main>
  );
}
