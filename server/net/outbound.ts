// Every request Tollgate sends out goes through here: the host is resolved,
// every address it resolves to is checked (server/domain/outbound.ts), and the
// connection is pinned to the checked address, so a name that resolves to a
// public address for the check and to 127.0.0.1 for the connection (DNS
// rebinding) cannot slip through. Redirects are never followed.
import { lookup as dnsLookup } from "node:dns/promises";
import { Agent, fetch } from "undici";
import { classifyAddress, isAllowlisted, outboundTarget, type AllowEntry } from "../domain/outbound.ts";

/** Resolves a host name to its addresses; injected so tests can answer as a DNS server would. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface OutboundRequest {
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

export type OutboundResult = { ok: true; status: number } | { ok: false; status?: number; error: string; refused: boolean };

export class OutboundRefused extends Error {}

export interface Outbound {
  /** POSTs `body` to `url` if the destination is allowed; a refusal is permanent, a failure may be retried. */
  post(url: string, request: OutboundRequest): Promise<OutboundResult>;
  readonly allow: AllowEntry[];
}

export function createOutbound(options: { allow: AllowEntry[]; resolver?: Resolver }): Outbound {
  const resolve = options.resolver ?? systemResolver;
  const { allow } = options;

  /** The address to connect to: the first one resolved, after all of them passed the check. */
  async function pinnedAddress(url: string): Promise<{ address: string; family: number }> {
    const target = outboundTarget(url);
    if ("error" in target) throw new OutboundRefused(target.error);
    const addresses = target.literal ? [{ address: target.literal, family: target.literal.includes(":") ? 6 : 4 }] : await resolve(target.host);
    if (addresses.length === 0) throw new Error(`${target.host} did not resolve to any address`);
    for (const { address } of addresses) {
      if (isAllowlisted(allow, { host: target.host, port: target.port, address })) continue;
      const verdict = classifyAddress(address);
      if (!verdict.allowed) {
        throw new OutboundRefused(
          `refused to send to ${target.host}: ${verdict.reason}; an admin can allow it with TOLLGATE_OUTBOUND_ALLOW`,
        );
      }
    }
    return addresses[0]!;
  }

  return {
    allow,
    async post(url, request) {
      let pinned: { address: string; family: number };
      try {
        pinned = await pinnedAddress(url);
      } catch (error) {
        return { ok: false, error: (error as Error).message, refused: error instanceof OutboundRefused };
      }
      // One agent per request: its lookup answers only with the checked address.
      const dispatcher = new Agent({
        connect: {
          lookup: (_hostname, lookupOptions, callback) =>
            // net.connect asks for one address or, when it may try several, for a list.
            (lookupOptions as { all?: boolean }).all
              ? (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned])
              : (callback as (error: null, address: string, family: number) => void)(null, pinned.address, pinned.family),
        },
      });
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: request.headers,
          body: request.body,
          redirect: "manual",
          signal: request.signal,
          dispatcher,
        });
        await response.body?.cancel();
        if (response.status >= 300 && response.status < 400) {
          return { ok: false, status: response.status, error: `receiver answered ${response.status} (a redirect, which is not followed)`, refused: false };
        }
        return response.ok ? { ok: true, status: response.status } : { ok: false, status: response.status, error: `receiver answered ${response.status}`, refused: false };
      } catch (error) {
        const cause = (error as { cause?: Error }).cause;
        return { ok: false, error: `could not reach the receiver: ${cause?.message ?? (error as Error).message}`, refused: false };
      } finally {
        void dispatcher.close();
      }
    },
  };
}
