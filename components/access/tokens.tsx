"use client";
// Script tokens: mint one (name, lifetime up to the workspace's limit, and the
// password again), shown once; list and revoke your own, or (admins) everyone's.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { Empty, ErrorNote, Loading } from "../ui";
import { ShownOnce } from "./shown-once";

export function Tokens({ isAdmin }: { isAdmin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [everyone, setEveryone] = useState(false);
  const tokens = useQuery(trpc.auth.tokens.queryOptions({ everyone }));
  const limit = useQuery(trpc.auth.tokenLimit.queryOptions());
  const settle = { onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.auth.tokens.queryKey() }) };
  const create = useMutation(trpc.auth.createToken.mutationOptions(settle));
  const revoke = useMutation(trpc.auth.revokeToken.mutationOptions(settle));
  const [name, setName] = useState("");
  const [hours, setHours] = useState("24");
  const [password, setPassword] = useState("");
  const maxHours = limit.data?.maxTokenHours;

  return (
    <section aria-labelledby="tokens-title" className="min-w-0 space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="tokens-title" className="text-sm font-semibold">
          Script tokens
        </h2>
        {isAdmin ? (
          <label className="flex items-center gap-1 text-xs text-slate-600">
            <input type="checkbox" checked={everyone} onChange={(event) => setEveryone(event.target.checked)} />
            Everyone&apos;s
          </label>
        ) : null}
      </div>
      {create.data ? <ShownOnce label={`New token "${create.data.name}"`} secret={create.data.token} onDone={() => create.reset()} /> : null}
      <form
        aria-label="New token"
        className="grid grid-cols-2 gap-2 sm:grid-cols-[minmax(0,1fr)_6rem_minmax(0,1fr)_auto] sm:items-end"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            { name: name.trim(), ttlHours: Number(hours), password },
            {
              onSuccess: () => {
                setName("");
                setPassword("");
              },
            },
          );
        }}
      >
        <label className="col-span-2 flex min-w-0 flex-col text-xs text-slate-600 sm:col-span-1">
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} placeholder="nightly report" className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <label className="flex min-w-0 flex-col text-xs text-slate-600">
          Hours
          <input type="number" min={1} max={maxHours} value={hours} onChange={(event) => setHours(event.target.value)} required className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <label className="flex min-w-0 flex-col text-xs text-slate-600">
          Your password
          <input type="password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} required className="rounded border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <button type="submit" disabled={create.isPending || !name.trim() || !password} className="col-span-2 rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50 sm:col-span-1">
          Create token
        </button>
      </form>
      <p className="text-xs text-slate-500">{maxHours ? `This workspace allows tokens of at most ${maxHours} hours.` : null}</p>
      {create.error || revoke.error ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(create.error ?? revoke.error)}
        </p>
      ) : null}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.error ? (
        <ErrorNote title="Could not load the tokens" error={tokens.error} />
      ) : tokens.data.items.length === 0 ? (
        <Empty>No tokens.</Empty>
      ) : (
        <ul aria-label="Tokens" className="space-y-2">
          {tokens.data.items.map((token) => {
            const ended = token.revokedAt !== null || Date.parse(token.expiresAt) <= Date.now();
            return (
              <li key={token.id} data-testid="token" className="flex flex-wrap items-start justify-between gap-2 rounded border border-slate-200 bg-white p-3">
                <div className="min-w-0 space-y-0.5 text-sm">
                  <p className="font-semibold break-words">
                    {token.name}
                    {token.revokedAt ? <span className="ml-2 rounded bg-red-100 px-1.5 text-xs font-medium text-red-800">revoked</span> : ended ? <span className="ml-2 rounded bg-slate-200 px-1.5 text-xs font-medium text-slate-700">expired</span> : null}
                  </p>
                  <p className="text-xs text-slate-500">
                    {everyone ? `${token.owner} · ` : ""}created {formatTime(token.createdAt)} · {token.revokedAt ? `revoked ${formatTime(token.revokedAt)}` : `expires ${formatTime(token.expiresAt)}`}
                  </p>
                </div>
                {!ended ? (
                  <button type="button" onClick={() => revoke.mutate({ tokenId: token.id })} aria-label={`Revoke token ${token.name}`} className="shrink-0 rounded border border-red-300 px-2 py-1 text-xs text-red-800">
                    Revoke
                  </button>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
