"use client";
// The console's sign-in card and password form: the login page and an
// invitation's accept page ask for a password the same way.
import { useEffect, useState, type FormEvent, type ReactNode } from "react";

/** A centred card on an otherwise empty page, titled. */
export function SignInCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <div className="w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-xl font-semibold">{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** A required, labelled text input of the sign-in forms, with an optional hint under its label. */
export function TextField({
  label,
  hint,
  type,
  autoComplete,
  value,
  onChange,
}: {
  label: string;
  hint?: string;
  type: "email" | "password";
  autoComplete: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <label className="block text-sm">
      <span className="font-medium">{label}</span>
      {hint ? <span className="block text-xs text-slate-600">{hint}</span> : null}
      <input
        type={type}
        autoComplete={autoComplete}
        required
        value={value}
        onChange={(event) => onChange(event.target.value)}
        className="mt-1 block w-full rounded border border-slate-300 px-3 py-2"
      />
    </label>
  );
}

export function PasswordForm({
  children,
  password,
  onPasswordChange,
  passwordHint,
  error,
  pending,
  submitLabel,
  pendingLabel,
  onSubmit,
}: {
  /** What comes before the password: the email field, or what the invitation is for. */
  children?: ReactNode;
  password: string;
  onPasswordChange: (password: string) => void;
  passwordHint?: string;
  error: { message: string } | null;
  pending: boolean;
  submitLabel: string;
  pendingLabel: string;
  onSubmit: () => void;
}) {
  // Until the page is interactive, a click would submit the bare HTML form (a
  // GET that drops what was typed): the button waits for the script.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => setInteractive(true), []);

  function submit(event: FormEvent) {
    event.preventDefault();
    onSubmit();
  }

  return (
    <form onSubmit={submit} className="space-y-4">
      {children}
      <TextField label="Password" hint={passwordHint} type="password" autoComplete="current-password" value={password} onChange={onPasswordChange} />
      {error ? (
        <p role="alert" className="text-sm text-red-700">
          {error.message}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={!interactive || pending}
        className="w-full rounded bg-slate-900 px-3 py-2 text-sm font-medium text-white disabled:opacity-60"
      >
        {pending ? pendingLabel : submitLabel}
      </button>
    </form>
  );
}
