"use client";
// The workspace's people, for admins: invite one (emailed, or a link to hand
// on), see and withdraw pending invitations, change a role, disable or
// enable (a confirm first: every session and token of theirs ends at once),
// and set a new password.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { formatTime } from "@/lib/format";
import { ErrorNote, Loading } from "../ui";
import { ShownOnce } from "./shown-once";

type Role = "ADMIN" | "OPERATOR" | "VIEWER";
const ROLE_LABEL: Record<Role, string> = { ADMIN: "Admin", OPERATOR: "Approver", VIEWER: "Viewer" };

function InvitePerson() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const create = useMutation(trpc.operator.create.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.operator.invitations.queryKey() }) }));
  const [form, setForm] = useState({ email: "", name: "", role: "OPERATOR" as Role });
  const sent = create.data;
  return (
    <div className="space-y-2">
      <form
        aria-label="Invite a person"
        className="grid grid-cols-2 gap-2 sm:grid-cols-[minmax(0,1.4fr)_minmax(0,1fr)_7rem_auto] sm:items-end"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(form, { onSuccess: () => setForm({ email: "", name: "", role: "OPERATOR" }) });
        }}
      >
        <label className="col-span-2 flex min-w-0 flex-col text-xs text-slate-600 sm:col-span-1">
          Email
          <input type="email" required value={form.email} onChange={(event) => setForm({ ...form, email: event.target.value })} className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <label className="flex min-w-0 flex-col text-xs text-slate-600">
          Name
          <input required value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <label className="flex min-w-0 flex-col text-xs text-slate-600">
          Role
          <select value={form.role} onChange={(event) => setForm({ ...form, role: event.target.value as Role })} className="rounded border border-slate-300 px-1 py-1 text-sm text-slate-900">
            {(Object.keys(ROLE_LABEL) as Role[]).map((role) => (
              <option key={role} value={role}>
                {ROLE_LABEL[role]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={create.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50">
          Invite
        </button>
        {create.error ? (
          <p role="alert" className="col-span-full text-sm text-red-700">
            {errorMessage(create.error)}
          </p>
        ) : null}
      </form>
      <p className="text-xs text-slate-600">They join by accepting: with their Tollgate password if they have an account, or one they choose. The link works once, for 7 days.</p>
      {sent?.emailed ? <p className="text-sm text-emerald-800">Invitation emailed to {sent.email}.</p> : null}
      {sent?.link ? (
        <ShownOnce
          label={`Invitation link for ${sent.email}${sent.emailError ? ` (the email failed: ${sent.emailError})` : ""}; send it to them yourself`}
          secret={sent.link}
          onDone={() => create.reset()}
        />
      ) : null}
    </div>
  );
}

function PendingInvitations() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const invitations = useQuery(trpc.operator.invitations.queryOptions());
  const withdraw = useMutation(trpc.operator.revokeInvitation.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.operator.invitations.queryKey() }) }));
  if (!invitations.data || invitations.data.items.length === 0) return null;
  return (
    <div className="space-y-1">
      <h3 className="text-xs font-semibold text-slate-600">Invited, not yet joined</h3>
      <ul aria-label="Pending invitations" className="divide-y divide-slate-200 rounded border border-slate-200 bg-white">
        {invitations.data.items.map((invitation) => {
          const expired = Date.parse(invitation.expiresAt) <= Date.now();
          return (
            <li key={invitation.invitationId} data-testid="invitation" className="flex flex-wrap items-center gap-2 p-2 text-sm">
              <span className="min-w-0 flex-1 truncate">
                {invitation.email} <span className="text-xs text-slate-500">· {ROLE_LABEL[invitation.role]} · {expired ? "expired" : `until ${formatTime(invitation.expiresAt)}`}</span>
              </span>
              <button type="button" onClick={() => withdraw.mutate({ invitationId: invitation.invitationId })} aria-label={`Withdraw the invitation of ${invitation.email}`} className="rounded border border-slate-300 px-2 py-0.5 text-xs">
                Withdraw
              </button>
            </li>
          );
        })}
      </ul>
      {withdraw.error ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(withdraw.error)}
        </p>
      ) : null}
    </div>
  );
}

export function People({ selfId }: { selfId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const people = useQuery(trpc.operator.list.queryOptions());
  const settle = { onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.operator.list.queryKey() }) };
  const setRole = useMutation(trpc.operator.setRole.mutationOptions(settle));
  const setDisabled = useMutation(trpc.operator.setDisabled.mutationOptions(settle));
  const resetPassword = useMutation(trpc.operator.resetPassword.mutationOptions(settle));
  const [confirming, setConfirming] = useState<string | null>(null);
  const [resetting, setResetting] = useState<{ id: string; password: string } | null>(null);
  const failure = setRole.error ?? setDisabled.error ?? resetPassword.error;

  return (
    <section aria-labelledby="people-title" className="min-w-0 space-y-3 lg:col-span-2">
      <h2 id="people-title" className="text-sm font-semibold">
        People
      </h2>
      <InvitePerson />
      <PendingInvitations />
      {failure ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(failure)}
        </p>
      ) : null}
      {resetPassword.isSuccess ? <p className="text-sm text-emerald-800">Password set; {resetPassword.data.sessionsEnded} session(s) and token(s) ended.</p> : null}
      {people.isPending ? (
        <Loading />
      ) : people.error ? (
        <ErrorNote title="Could not load the people" error={people.error} />
      ) : (
        <ul aria-label="People" className="divide-y divide-slate-200 rounded border border-slate-200 bg-white">
          {people.data.items.map((person) => (
            <li key={person.id} data-testid="person" className="flex flex-wrap items-center gap-2 p-3 text-sm">
              <div className="min-w-0 flex-1">
                <p className="truncate font-medium">
                  {person.email}
                  {person.id === selfId ? <span className="ml-1 text-xs text-slate-500">(you)</span> : null}
                  {person.disabled ? <span className="ml-2 rounded bg-slate-200 px-1.5 text-xs font-medium text-slate-700">disabled</span> : null}
                </p>
                <p className="truncate text-xs text-slate-500">{person.name}</p>
              </div>
              <select
                aria-label={`Role of ${person.email}`}
                value={person.role}
                onChange={(event) => setRole.mutate({ operatorId: person.id, role: event.target.value as Role })}
                className="rounded border border-slate-300 px-1 py-1 text-xs"
              >
                {(Object.keys(ROLE_LABEL) as Role[]).map((role) => (
                  <option key={role} value={role}>
                    {ROLE_LABEL[role]}
                  </option>
                ))}
              </select>
              {resetting?.id === person.id ? (
                <form
                  className="flex items-center gap-1"
                  onSubmit={(event) => {
                    event.preventDefault();
                    resetPassword.mutate({ operatorId: person.id, password: resetting.password }, { onSuccess: () => setResetting(null) });
                  }}
                >
                  <input
                    type="password"
                    autoComplete="new-password"
                    aria-label={`New password for ${person.email}`}
                    minLength={8}
                    required
                    value={resetting.password}
                    onChange={(event) => setResetting({ id: person.id, password: event.target.value })}
                    className="w-36 rounded border border-slate-300 px-2 py-1 text-xs"
                  />
                  <button type="submit" className="rounded border border-slate-300 px-2 py-1 text-xs">
                    Set
                  </button>
                </form>
              ) : (
                <button type="button" onClick={() => setResetting({ id: person.id, password: "" })} className="rounded border border-slate-300 px-2 py-1 text-xs">
                  New password
                </button>
              )}
              {confirming === person.id ? (
                <span role="alertdialog" aria-label={`Confirm disabling ${person.email}`} className="flex items-center gap-1 text-xs">
                  Their sessions and tokens end now.
                  <button type="button" onClick={() => setDisabled.mutate({ operatorId: person.id, disabled: true }, { onSettled: () => setConfirming(null) })} className="rounded bg-red-700 px-2 py-1 font-medium text-white">
                    Yes, disable
                  </button>
                  <button type="button" onClick={() => setConfirming(null)} className="rounded px-2 py-1 hover:bg-slate-100">
                    Back
                  </button>
                </span>
              ) : person.disabled ? (
                <button type="button" onClick={() => setDisabled.mutate({ operatorId: person.id, disabled: false })} className="rounded border border-slate-300 px-2 py-1 text-xs">
                  Enable
                </button>
              ) : (
                <button type="button" onClick={() => setConfirming(person.id)} aria-label={`Disable ${person.email}`} className="rounded border border-red-300 px-2 py-1 text-xs text-red-800">
                  Disable
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
