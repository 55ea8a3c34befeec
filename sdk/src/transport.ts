// How the SDK's calls reach the server: tRPC's HTTP link over undici's
// `request`. Node's built-in fetch (undici's fetch) builds a Fetch Request,
// Response and web streams for every call, which on a 2-core machine cost
// about 0.3 ms a call and twice the CPU of `request`: most of what a call
// costs the agent's process. Both go through undici's global dispatcher, so
// its connections are kept open between calls and a dispatcher set with
// `setGlobalDispatcher` (a proxy, say) serves the SDK as it serves fetch.
import type { httpLink } from "@trpc/client";
import { request } from "undici";

type LinkFetch = NonNullable<Parameters<typeof httpLink>[0]["fetch"]>;
type Headers = NonNullable<Parameters<typeof request>[1]>["headers"];

/** A fetch for tRPC's `httpLink` (its `fetch` option), for the JSON calls tRPC makes. */
export const callFetch: LinkFetch = async (input, init = {}) => {
  if (init.body !== undefined && init.body !== null && typeof init.body !== "string") throw new TypeError("the SDK's calls send JSON text only");
  const answer = await request(typeof input === "string" || input instanceof URL ? input : input.url, {
    method: (init.method ?? "GET") as "GET",
    headers: init.headers as Headers,
    body: init.body ?? undefined,
    signal: init.signal ?? undefined,
  });
  return { ok: answer.statusCode >= 200 && answer.statusCode < 300, status: answer.statusCode, json: () => answer.body.json() };
};
