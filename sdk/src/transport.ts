// How the SDK's calls reach the server: the public API's wire format (tRPC's
// HTTP RPC, plain JSON: a query is `GET <path>?input=<url-encoded JSON>`, a
// mutation `POST <path>` with the JSON as its body), sent through undici's
// global dispatcher. Error answers become tRPC's own TRPCClientError, with the
// server's code in `data`, as tRPC's client gives them.
//
// Not through tRPC's client: for each call it builds a chain of observables
// and two AbortControllers, one of which it aborts when the call completes,
// making a DOMException with its stack; on a 2-core machine that cost the
// agent's process as much CPU as the HTTP request itself, and a request begun
// and completed took 13 to 14 % less time sent this way
// (`BENCH_ONLY=transport npm run bench`). Node's fetch goes through the same
// dispatcher, so connections are kept open between calls, and a dispatcher
// set with `setGlobalDispatcher` (a proxy, say) serves the SDK as it serves
// fetch.
import { TRPCClientError } from "@trpc/client";
import { getGlobalDispatcher } from "undici";
import { QUERIES, type Procedure, type ProcedureInput, type ProcedureOutput } from "./contract.ts";

export type CallKind = "query" | "mutation";

/** One call of a procedure, answered with its output or rejected with a TRPCClientError. */
export type Send = (path: string, input: unknown, kind: CallKind) => Promise<unknown>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/**
 * Calls at `apiUrl` (the server's `/api/trpc`) with an agent key. A call that
 * got no answer, or one that is not JSON (a proxy's error page, say), rejects
 * with no tRPC code in `data`: the SDK retries those as failures of the network.
 */
export function httpSender(apiUrl: string, apiKey: string): Send {
  // Parsed once: undici's `request(url)` parses the URL again at every call.
  const { origin, pathname } = new URL(apiUrl);
  const queryHeaders = { authorization: `Bearer ${apiKey}` };
  const mutationHeaders = { ...queryHeaders, "content-type": "application/json" };
  return async (path, input, kind) => {
    let status: number;
    let answer: unknown;
    try {
      // The global dispatcher as it is at each call, as `request` and fetch take it.
      const response =
        kind === "query"
          ? await getGlobalDispatcher().request({ origin, path: `${pathname}/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, method: "GET", headers: queryHeaders })
          : await getGlobalDispatcher().request({ origin, path: `${pathname}/${path}`, method: "POST", headers: mutationHeaders, body: JSON.stringify(input) });
      status = response.statusCode;
      answer = await response.body.json();
    } catch (cause) {
      throw TRPCClientError.from(cause instanceof Error ? cause : new Error(String(cause)));
    }
    if (isObject(answer) && isObject(answer.error) && typeof answer.error.code === "number" && typeof answer.error.message === "string") {
      throw TRPCClientError.from(answer as Parameters<typeof TRPCClientError.from>[0]);
    }
    if (isObject(answer) && isObject(answer.result)) return answer.result.data;
    throw TRPCClientError.from(new Error(`the server's answer to ${path} (HTTP ${status}) is neither a result nor an error`));
  };
}

/** One call to the server, typed by the contract (the package carries no server types); not retried. */
export type Call = <P extends Procedure>(path: P, input: ProcedureInput<P>) => Promise<ProcedureOutput<P>>;

/** The contract's procedures over httpSender: each a query or a mutation as the contract says. */
export function contractCaller(apiUrl: string, apiKey: string): Call {
  const send = httpSender(apiUrl, apiKey);
  return (path, input) => send(path, input, QUERIES.has(path) ? "query" : "mutation") as Promise<ProcedureOutput<typeof path>>;
}
