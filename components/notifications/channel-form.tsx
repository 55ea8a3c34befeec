"use client";
// A new notification channel. A WEBHOOK channel's signing secret is shown once, here.
// The workspace's first channel replaces the default (email to the operators each
// approval asks): the form says so and offers to keep that email as a channel.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { Field, inputClass } from "../policies/field";

type Kind = "EMAIL" | "SLACK" | "WEBHOOK";
const KIND_HINT: Record<Kind, string> = {
  EMAIL: "Emails through the server's SMTP settings. Leave the addresses empty to email the operators each approval asks.",
  SLACK: "A Slack (or compatible) incoming-webhook URL: a message with the approval and a button to open it.",
  WEBHOOK: "Your endpoint gets the approval as JSON, signed with a secret shown once after saving.",
};

/** The explicit channel that does what the default did. */
const OPERATOR_EMAIL = "operator-email";

export function ChannelForm({ smtpConfigured, firstChannel }: { smtpConfigured: boolean; firstChannel: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Kind>(smtpConfigured ? "EMAIL" : "SLACK");
  const [target, setTarget] = useState("");
  const [threshold, setThreshold] = useState("5");
  const [windowSeconds, setWindowSeconds] = useState("60");
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const [keepDefault, setKeepDefault] = useState(true);
  // The first channel ends the default email, unless it is itself that email (no addresses).
  const replacesDefault = firstChannel && smtpConfigured && !(kind === "EMAIL" && !target.trim());
  const keepEmail = useMutation(trpc.notification.createChannel.mutationOptions());
  const create = useMutation(
    trpc.notification.createChannel.mutationOptions({
      onSuccess: (created) => {
        setError(null);
        setName("");
        setTarget("");
        setSecret(created.signingSecret ? { name: created.channel.name, value: created.signingSecret } : null);
      },
      onError: (failure) => setError(errorMessage(failure)),
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.notification.channels.queryKey() }),
    }),
  );

  return (
    <div className="space-y-3">
      {secret ? (
        <div role="status" className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950" data-testid="signing-secret">
          <p className="font-medium">Signing secret of “{secret.name}”: copy it now, it is not shown again.</p>
          <code className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs">{secret.value}</code>
          <p className="mt-1 text-xs">Each POST carries a tollgate-signature header: t=&lt;ms&gt;,v1=&lt;hex HMAC-SHA256 of &quot;t.body&quot;&gt;.</p>
        </div>
      ) : null}
      <form
        noValidate
        aria-label="New channel"
        className="grid min-w-0 grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 sm:grid-cols-2"
        onSubmit={async (event) => {
          event.preventDefault();
          const list = target.split(/[,\s]+/).filter(Boolean);
          if (replacesDefault && keepDefault) {
            // The email first: should the new channel then be refused, the operators are still emailed as before.
            try {
              await keepEmail.mutateAsync({ name: OPERATOR_EMAIL, kind: "EMAIL", emails: [] });
            } catch (failure) {
              setError(`The operator email was not kept, and nothing was added: ${errorMessage(failure)}`);
              return;
            }
          }
          create.mutate({
            name: name.trim(),
            kind,
            ...(kind === "EMAIL" ? { emails: list } : { url: target.trim() }),
            digestThreshold: Number(threshold),
            digestWindowSeconds: Number(windowSeconds),
          });
        }}
      >
        <h3 className="text-sm font-semibold sm:col-span-2">New channel</h3>
        <Field label="Name">{(control) => <input {...control} value={name} onChange={(event) => setName(event.target.value)} placeholder="ops-slack" className={inputClass(false)} />}</Field>
        <Field label="Kind" hint={KIND_HINT[kind]}>
          {(control) => (
            <select {...control} value={kind} onChange={(event) => setKind(event.target.value as Kind)} className={inputClass(false)}>
              <option value="EMAIL" disabled={!smtpConfigured}>
                Email{smtpConfigured ? "" : " (needs TOLLGATE_SMTP_URL)"}
              </option>
              <option value="SLACK">Slack-compatible webhook</option>
              <option value="WEBHOOK">Signed JSON webhook</option>
            </select>
          )}
        </Field>
        <Field label={kind === "EMAIL" ? "Addresses (optional)" : "URL"} className="sm:col-span-2">
          {(control) => (
            <input
              {...control}
              value={target}
              onChange={(event) => setTarget(event.target.value)}
              placeholder={kind === "EMAIL" ? "ops@example.com, oncall@example.com" : "https://hooks.slack.com/services/…"}
              className={inputClass(false)}
            />
          )}
        </Field>
        <Field label="Digest after (messages)" hint="More approvals than this within the window go out as one digest.">
          {(control) => <input {...control} inputMode="numeric" value={threshold} onChange={(event) => setThreshold(event.target.value)} className={inputClass(false)} />}
        </Field>
        <Field label="Window (seconds)">
          {(control) => <input {...control} inputMode="numeric" value={windowSeconds} onChange={(event) => setWindowSeconds(event.target.value)} className={inputClass(false)} />}
        </Field>
        {replacesDefault ? (
          <fieldset className="space-y-1 rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 sm:col-span-2" data-testid="replaces-default">
            <legend className="sr-only">The default email</legend>
            <p>
              Until now, with no channels, every approval that waits for a person is <strong>emailed to the operators it asks</strong>. A first channel replaces
              that default: from then on approvals are announced only on the channels listed here.
            </p>
            <label className="flex items-start gap-2">
              <input type="checkbox" className="mt-1" checked={keepDefault} onChange={(event) => setKeepDefault(event.target.checked)} />
              <span>
                Keep emailing the operators each approval asks, as a channel of its own (“{OPERATOR_EMAIL}”)
              </span>
            </label>
          </fieldset>
        ) : null}
        {error ? (
          <p role="alert" className="text-sm text-red-700 sm:col-span-2" data-testid="channel-error">
            {error}
          </p>
        ) : null}
        <div className="sm:col-span-2">
          <button type="submit" disabled={create.isPending || keepEmail.isPending} className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50">
            {create.isPending ? "Adding…" : "Add channel"}
          </button>
        </div>
      </form>
    </div>
  );
}
