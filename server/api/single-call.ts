// One query or mutation, called over HTTP with a JSON input: every call the
// SDK makes, and the console's mutations. tRPC's Node adapter turns each
// request into a Fetch Request and its answer into a Fetch Response (a URL,
// Headers, several AbortSignals, a web stream each way), which cost about as much
// CPU as the rest of a call outside the database. This answers such a call in
// the same wire format (tRPC's HTTP RPC) through tRPC's own procedure call,
// error shape and status code, without them. Any other call (a batch, a
// subscription, a streamed answer, a body of unknown length, an input that is
// not JSON) goes to tRPC's adapter, which answers it as before.
import type { IncomingMessage, ServerResponse } from "node:http";
import { callTRPCProcedure, getErrorShape, getTRPCErrorFromUnknown, transformTRPCResponse, type AnyTRPCProcedure, type AnyTRPCRouter, type TRPCError } from "@trpc/server";
import { getHTTPStatusCode } from "@trpc/server/http";

type CallType = "query" | "mutation";

interface Call {
  procedure: AnyTRPCProcedure;
  type: CallType;
}

const METHOD_OF = { query: "GET", mutation: "POST" } as const;

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(";", 1)[0]?.trim().toLowerCase();
}

/**
 * The call, if this request is one answered here: a known query asked with
 * GET or mutation with POST, not a batch, not asking for a stream, with a JSON
 * body of declared length (HTTP's framing then holds the body to it, so
 * reading it needs no limit of its own). Undefined sends it to tRPC's adapter.
 */
function singleCallOf(router: AnyTRPCRouter, req: IncomingMessage, path: string, query: URLSearchParams, maxBodyBytes: number): Call | undefined {
  const procedures = router._def.procedures as Record<string, AnyTRPCProcedure | undefined>;
  const procedure = Object.hasOwn(procedures, path) ? procedures[path] : undefined;
  const type = procedure?._def.type;
  if (!procedure || (type !== "query" && type !== "mutation") || req.method !== METHOD_OF[type]) return undefined;
  if (query.has("batch") || query.has("connectionParams") || req.headers["trpc-accept"] !== undefined || req.headers.accept?.includes("application/jsonl")) return undefined;
  if (type === "query") {
    const contentType = req.headers["content-type"];
    return contentType === undefined || mediaType(contentType) === "application/json" ? { procedure, type } : undefined;
  }
  const length = Number(req.headers["content-length"]);
  if (req.headers["transfer-encoding"] !== undefined || !Number.isSafeInteger(length) || length > maxBodyBytes) return undefined;
  return mediaType(req.headers["content-type"]) === "application/json" ? { procedure, type } : undefined;
}

/** The whole body as text, or undefined when the client went away first. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.once("close", () => resolve(undefined));
  });
}

const NOT_JSON = Symbol("not JSON");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

export interface SingleCallOptions<TContext> {
  router: AnyTRPCRouter;
  maxBodyBytes: number;
  createContext(req: IncomingMessage, res: ServerResponse): TContext;
  /** Extra headers of an answer, as the adapter's responseMeta gives them. */
  headersFor(errors: readonly TRPCError[]): Record<string, string>;
  onError(opts: { error: TRPCError; path: string; input: unknown; ctx: TContext; type: CallType; req: IncomingMessage }): void;
  /** tRPC's adapter, for every other call; a body already read is on `req.body`, where the adapter looks first. */
  adapter(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/** A handler of tRPC calls at `path` (the procedure's name, decoded), with the URL's query. */
export function createSingleCallHandler<TContext>(options: SingleCallOptions<TContext>) {
  const { router } = options;
  const config = router._def._config;
  return async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> => {
    const call = singleCallOf(router, req, path, query, options.maxBodyBytes);
    if (!call) return options.adapter(req, res, path);
    let sent: unknown;
    if (call.type === "mutation") {
      const body = await readBody(req);
      if (body === undefined) return;
      sent = parseJson(body);
      if (sent === NOT_JSON) {
        // The adapter words the refusal of a body that is not JSON.
        (req as IncomingMessage & { body?: string }).body = body;
        return options.adapter(req, res, path);
      }
    } else {
      const text = query.get("input");
      sent = text ? parseJson(text) : undefined;
      if (sent === NOT_JSON) return options.adapter(req, res, path);
    }
    const input = sent === undefined ? undefined : config.transformer.input.deserialize(sent);
    const ctx = options.createContext(req, res);
    let answer: object;
    let errors: TRPCError[] = [];
    try {
      const data = await callTRPCProcedure({ router, path, type: call.type, ctx, getRawInput: async () => input, signal: undefined, batchIndex: 0 });
      answer = { result: { data } };
    } catch (cause) {
      const error = getTRPCErrorFromUnknown(cause);
      errors = [error];
      options.onError({ error, path, input, ctx, type: call.type, req });
      answer = { error: getErrorShape({ config, error, type: call.type, path, input, ctx }) };
    }
    const status = getHTTPStatusCode(answer as Parameters<typeof getHTTPStatusCode>[0]);
    const text = JSON.stringify(transformTRPCResponse(config, answer as Parameters<typeof transformTRPCResponse>[1]));
    // Its length declared: writeHead sends the headers at once, and would otherwise chunk the body.
    res
      .writeHead(status, { ...options.headersFor(errors), "content-type": "application/json", "content-length": Buffer.byteLength(text), vary: "trpc-accept, accept" })
      .end(text);
  };
}
