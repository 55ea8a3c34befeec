"use client";
// Operator login. After logging in, returns to the page that sent the operator here.
import { useMutation } from "@tanstack/react-query";
import { useRouter, useSearchParams } from "next/navigation";
import { Suspense, useState } from "react";
import { PasswordForm, SignInCard, TextField } from "@/components/password-form";
import { safeRedirectPath } from "@/lib/redirect";
import { useTRPC } from "@/lib/trpc";

function LoginForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const login = useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: () => router.replace(safeRedirectPath(params.get("next"), window.location.origin)),
    }),
  );

  return (
    <PasswordForm
      password={password}
      onPasswordChange={setPassword}
      error={login.error}
      pending={login.isPending}
      submitLabel="Log in"
      pendingLabel="Logging in…"
      onSubmit={() => login.mutate({ email, password })}
    >
      <p className="text-sm text-slate-600">Log in to review and decide agents&apos; tool calls.</p>
      <TextField label="Email" type="email" autoComplete="username" value={email} onChange={setEmail} />
    </PasswordForm>
  );
}

export default function LoginPage() {
  return (
    <SignInCard title="Tollgate">
      <Suspense>
        <LoginForm />
      </Suspense>
    </SignInCard>
  );
}
