"use client";
// The Access page: agent keys (admins create and revoke; operators see them),
// script tokens (everyone mints and revokes their own; admins everyone's), and
// for admins the workspace's people (roles, disabling, new passwords); the
// person's workspaces, and for admins a new one.
// A new key or token is shown once, here, and never again.
import { useOperator } from "../app-shell";
import { AgentKeys } from "./agent-keys";
import { People } from "./people";
import { Tokens } from "./tokens";
import { Workspaces } from "./workspaces";

export function AccessPage() {
  const operator = useOperator();
  return (
    <div className="mx-auto max-w-6xl space-y-4">
      <div className="min-w-0">
        <h1 className="text-lg font-semibold">Access</h1>
        <p className="text-sm text-slate-600">
          Agent services call Tollgate with an agent key; scripts act as an operator with a token. Each is shown once when created and can be revoked here: access
          ends at once, on every node.
        </p>
      </div>
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
        {operator.role === "VIEWER" ? null : <AgentKeys canEdit={operator.role === "ADMIN"} />}
        <Tokens isAdmin={operator.role === "ADMIN"} />
        {operator.role === "ADMIN" ? <People selfId={operator.id} /> : null}
        <Workspaces isAdmin={operator.role === "ADMIN"} />
      </div>
    </div>
  );
}
