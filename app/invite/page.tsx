"use client";
// Accepting an invitation: the link's token is in the fragment (#tgi_...), which
// the browser sends to no server. The person signs in with their Tollgate
// password if they have an account, or chooses one; the page never says which
// applies, so the link tells nobody whether an account exists.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { PasswordForm, SignInCard } from "@/components/password-form";
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

  return (
    <SignInCard title="Tollgate invitation">
      {token === null || (token && invitation.isPending) ? (
        <p className="text-sm text-slate-600">Reading the invitation…</p>
      ) : !token || invitation.error ? (
        <p role="alert" className="text-sm text-red-700">
          {invitation.error?.message ?? "This link holds no invitation."}
        </p>
      ) : invitation.data ? (
        <PasswordForm
          password={password}
          onPasswordChange={setPassword}
          passwordHint="Your Tollgate password if you have an account; if you are new, the one you choose (at least 8 characters)."
          error={accept.error}
          pending={accept.isPending}
          submitLabel="Join"
          pendingLabel="Joining…"
          onSubmit={() => accept.mutate({ token, password })}
        >
          <p className="text-sm text-slate-700">
            Join <strong className="break-words">{invitation.data.workspaceName}</strong> as {ROLE_LABEL[invitation.data.role]}, signed in as{" "}
            <strong className="break-all">{invitation.data.email}</strong>.
          </p>
        </PasswordForm>
      ) : null}
    </SignInCard>
  );
}
