"use client";
// The workspace's channels: where each sends, its digest, and (for admins) on/off and delete.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import type { Outputs } from "@/lib/types";
import { Empty } from "../ui";

type Channel = Outputs["notification"]["channels"]["channels"][number];
const KIND_LABEL: Record<Channel["kind"], string> = { EMAIL: "Email", SLACK: "Slack-compatible", WEBHOOK: "Signed webhook" };

export function ChannelList({ channels, canEdit, smtpConfigured }: { channels: Channel[]; canEdit: boolean; smtpConfigured: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settle = { onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.notification.channels.queryKey() }) };
  const update = useMutation(trpc.notification.updateChannel.mutationOptions(settle));
  const remove = useMutation(trpc.notification.deleteChannel.mutationOptions(settle));
  const failure = update.error ?? remove.error;

  if (channels.length === 0) {
    return (
      <Empty>
        {smtpConfigured
          ? "No channels: every approval that waits for a person is emailed to the operators it asks (TOLLGATE_SMTP_URL is set)."
          : "No channels, and no SMTP server configured: approvals are only seen in this console."}
      </Empty>
    );
  }
  return (
    <div className="space-y-2">
      {failure ? (
        <p role="alert" className="text-sm text-red-700">
          {errorMessage(failure)}
        </p>
      ) : null}
      <ul className="space-y-2" aria-label="Channels">
        {channels.map((channel) => (
          <li key={channel.channelId} className="flex flex-wrap items-start justify-between gap-2 rounded border border-slate-200 bg-white p-3" data-testid="channel">
            <div className="min-w-0 space-y-0.5">
              <p className="text-sm font-semibold break-words">
                {channel.name} <span className="font-normal text-slate-500">· {KIND_LABEL[channel.kind]}</span>
                {!channel.enabled ? <span className="ml-2 rounded bg-slate-200 px-1.5 text-xs font-medium text-slate-700">off</span> : null}
              </p>
              <p className="text-xs break-all text-slate-700">
                {channel.kind === "EMAIL" ? (channel.emails.length ? channel.emails.join(", ") : "the operators each approval asks") : `${channel.urlOrigin}/… (the path is kept secret)`}
                {channel.signed ? " · signed" : ""}
              </p>
              <p className="text-xs text-slate-500">
                At most {channel.digestThreshold} message{channel.digestThreshold === 1 ? "" : "s"} per {channel.digestWindowSeconds} s; more become one digest.
              </p>
              {channel.health?.failing ? (
                <p role="alert" data-testid="channel-failing" className="rounded border border-red-300 bg-red-50 px-2 py-1 text-xs text-red-900">
                  <span className="font-semibold">Failing: its last {channel.health.failuresInARow} announcements were not delivered.</span>
                  {channel.health.lastError ? <span className="block break-words">Latest error: {channel.health.lastError}</span> : null}
                </p>
              ) : null}
            </div>
            {canEdit ? (
              <div className="flex shrink-0 gap-2">
                <button
                  type="button"
                  onClick={() => update.mutate({ channelId: channel.channelId, enabled: !channel.enabled })}
                  className="rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100"
                  aria-label={`${channel.enabled ? "Turn off" : "Turn on"} ${channel.name}`}
                >
                  {channel.enabled ? "Turn off" : "Turn on"}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    if (window.confirm(`Delete the channel “${channel.name}”? What it has not sent yet is dropped.`)) remove.mutate({ channelId: channel.channelId });
                  }}
                  className="rounded border border-red-300 px-2 py-1 text-xs text-red-800 hover:bg-red-50"
                  aria-label={`Delete ${channel.name}`}
                >
                  Delete
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
