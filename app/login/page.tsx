"use client";
// Operator login. After logging in, returns to the page that sent the operator here.
import { useMutation } from "@tanstack/react-query";
import { useRouter, useSearchParams } from "next/navigation";
import { Suspense, useEffect, useState, type FormEvent } from "react";
import { safeRedirectPath } from "@/lib/redirect";
import { useTRPC } from "@/lib/trpc";

function LoginForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  // Until the page is interactive, a click would submit the bare HTML form (a
  // GET that drops what was typed): the button waits for the script.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => setInteractive(true), []);
  const login = useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: () => router.replace(safeRedirectPath(params.get("next"), window.location.origin)),
    }),
  );

  function submit(event: FormEvent) {
    event.preventDefault();
    login.mutate({ email, password });
  }

  return (
    <form onSubmit={submit} className="w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      <h1 className="text-xl font-semibold">Tollgate</h1>
      <p className="text-sm text-slate-600">Log in to review and decide agents&apos; tool calls.</p>
      <label className="block text-sm">
        <span className="font-medium">Email</span>
        <input
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          className="mt-1 block w-full rounded border border-slate-300 px-3 py-2"
        />
      </label>
      <label className="block text-sm">
        <span className="font-medium">Password</span>
        <input
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          className="mt-1 block w-full rounded border border-slate-300 px-3 py-2"
        />
      </label>
      {login.error ? (
        <p role="alert" className="text-sm text-red-700">
          {login.error.message}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={!interactive || login.isPending}
        className="w-full rounded bg-slate-900 px-3 py-2 text-sm font-medium text-white disabled:opacity-60"
      >
        {login.isPending ? "Logging in…" : "Log in"}
      </button>
    </form>
  );
}

export default function LoginPage() {
  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <Suspense>
        <LoginForm />
      </Suspense>
    </main>
  );
}
