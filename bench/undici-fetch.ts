// The fetch the benchmark's operator clients (tRPC's client, as the console
// uses it) send through: undici's `request`, without the Fetch Request,
// Response and web streams Node's fetch builds for every call, so that the
// operator's calls in a measured round trip cost what a lean client's would.
import type { httpLink } from "@trpc/client";
import { request } from "undici";

type LinkFetch = NonNullable<Parameters<typeof httpLink>[0]["fetch"]>;
type Headers = NonNullable<Parameters<typeof request>[1]>["headers"];

/** A fetch for tRPC's `httpLink` (its `fetch` option), for the JSON calls tRPC makes. */
export const undiciFetch: LinkFetch = async (input, init = {}) => {
  if (init.body !== undefined && init.body !== null && typeof init.body !== "string") throw new TypeError("the benchmark's calls send JSON text only");
  const answer = await request(typeof input === "string" || input instanceof URL ? input : input.url, {
    method: (init.method ?? "GET") as "GET",
    headers: init.headers as Headers,
    body: init.body ?? undefined,
    signal: init.signal ?? undefined,
  });
  return { ok: answer.statusCode >= 200 && answer.statusCode < 300, status: answer.statusCode, json: () => answer.body.json() };
};
