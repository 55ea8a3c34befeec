// Real HTTP clients for tests: the agent SDK and a logged-in operator.
import { createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "../server/api/router.ts";
import { createTollgate } from "../sdk/src/index.ts";
import { ADMIN, AGENT_KEY } from "./harness.ts";

export const agentSdk = (url: string, apiKey = AGENT_KEY, options: { push?: boolean; networkRetries?: number } = {}) =>
  createTollgate({ url, apiKey, pollMs: 10_000, ...options });

export async function operatorClient(url: string, credentials = ADMIN) {
  const response = await fetch(`${url}/api/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(credentials),
  });
  if (!response.ok) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0]!;
  // As the console's pages do: the session cookie is only accepted with the console's own origin.
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/api/trpc`, headers: { cookie, origin: new URL(url).origin } })] });
}

export type OperatorClient = Awaited<ReturnType<typeof operatorClient>>;

/** The token of an invitation link (what follows #). */
export const invitationToken = (link: string | null) => {
  if (!link) throw new Error("the invitation came back without a link (it was emailed)");
  return link.slice(link.indexOf("#") + 1);
};

/**
 * Adds a person as an admin does: operator.create invites them (no SMTP: the
 * link comes back) and they accept it with their password, over HTTP.
 */
export async function addPerson(url: string, admin: OperatorClient, person: { email: string; name: string; role: "ADMIN" | "OPERATOR" | "VIEWER"; password: string }) {
  const { link } = await admin.operator.create.mutate({ email: person.email, name: person.name, role: person.role });
  const response = await fetch(`${url}/api/trpc/auth.acceptInvitation`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: invitationToken(link), password: person.password }),
  });
  if (!response.ok) throw new Error(`accepting the invitation failed: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { result: { data: { operator: { id: string } } } };
  return { id: body.result.data.operator.id };
}
