"use client";
// The Notifications page: where approvals are announced (channels), who the
// workspace default asks, and the groups routing can name. Admins change them.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { useOperator } from "../app-shell";
import { ErrorNote, Loading } from "../ui";
import { ChannelForm } from "./channel-form";
import { ChannelList } from "./channel-list";
import { DefaultRouting } from "./default-routing";
import { PeopleAndGroups } from "./people-groups";

export function NotificationsPage() {
  const trpc = useTRPC();
  const operator = useOperator();
  const isAdmin = operator.role === "ADMIN";
  const channels = useQuery(trpc.notification.channels.queryOptions());
  return (
    <div className="mx-auto max-w-6xl space-y-4">
      <div className="min-w-0">
        <h1 className="text-lg font-semibold">Notifications</h1>
        <p className="text-sm text-slate-600">
          Approvals that wait for a person are announced where your operators are. Messages link to the approval; deciding always happens here, after logging in.
        </p>
      </div>
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
        <section aria-labelledby="channels-title" className="min-w-0 space-y-3">
          <h2 id="channels-title" className="text-sm font-semibold">
            Channels
          </h2>
          {channels.isPending ? (
            <Loading />
          ) : channels.error ? (
            <ErrorNote title="Could not load the channels" error={channels.error} />
          ) : (
            <>
              <ChannelList channels={channels.data.channels} canEdit={isAdmin} smtpConfigured={channels.data.smtpConfigured} />
              {isAdmin ? <ChannelForm smtpConfigured={channels.data.smtpConfigured} firstChannel={channels.data.channels.length === 0} /> : null}
            </>
          )}
        </section>
        <div className="min-w-0 space-y-4">
          <section aria-labelledby="routing-title" className="space-y-2">
            <h2 id="routing-title" className="text-sm font-semibold">
              Default routing
            </h2>
            <p className="text-xs text-slate-600">For approvals no rule routes; a rule that asks a person can route its own (Policies).</p>
            <DefaultRouting canEdit={isAdmin} />
          </section>
          <section aria-labelledby="people-title" className="space-y-2">
            <h2 id="people-title" className="text-sm font-semibold">
              People and groups
            </h2>
            <PeopleAndGroups canEdit={isAdmin} />
          </section>
        </div>
      </div>
    </div>
  );
}
