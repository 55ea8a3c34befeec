// Which destinations Tollgate may send requests to (webhooks to resumeUrl,
// notifications): public unicast addresses only, unless an admin's allowlist
// names the destination. Checked on the resolved address, never on the name.
import ipaddr from "ipaddr.js";

/** ipaddr.js's range names that are public unicast; everything else is refused. */
const PUBLIC_RANGES = new Set(["unicast"]);

export type OutboundVerdict = { allowed: true } | { allowed: false; reason: string };

/** An allowlist entry: a host name (optionally with a port), or an address range. */
export type AllowEntry =
  | { kind: "host"; host: string; port: number | null }
  | { kind: "range"; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string };

/**
 * Parses TOLLGATE_OUTBOUND_ALLOW: comma-separated host names, host:port pairs,
 * addresses or CIDR ranges ("localhost:4000, 127.0.0.1/32, 10.1.0.0/16").
 * Throws naming the entry that is none of these.
 */
export function parseAllowlist(text: string | undefined): AllowEntry[] {
  if (!text?.trim()) return [];
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry): AllowEntry => {
      if (entry.includes("/")) {
        try {
          return { kind: "range", range: ipaddr.parseCIDR(entry), text: entry };
        } catch {
          throw new Error(`"${entry}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
        }
      }
      if (ipaddr.isValid(unbracket(entry))) {
        const address = ipaddr.parse(unbracket(entry));
        return { kind: "range", range: [address, address.kind() === "ipv4" ? 32 : 128], text: entry };
      }
      const match = /^([a-z0-9.-]+?)\.?(?::(\d{1,5}))?$/i.exec(entry);
      if (!match) throw new Error(`"${entry}" is not a host name, host:port, address or CIDR range`);
      return { kind: "host", host: match[1]!.toLowerCase(), port: match[2] ? Number(match[2]) : null };
    });
}

const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/** The address in its plain form: IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address it carries. */
function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(address)) return null;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** Whether the allowlist names this destination, by host name and port or by its address. */
export function isAllowlisted(allow: AllowEntry[], destination: { host: string; port: number; address?: string }): boolean {
  const host = unbracket(destination.host).toLowerCase().replace(/\.$/, "");
  const address = destination.address ? normalise(destination.address) : normalise(host);
  return allow.some((entry) => {
    if (entry.kind === "host") return entry.host === host && (entry.port === null || entry.port === destination.port);
    return address !== null && address.kind() === entry.range[0].kind() && address.match(entry.range);
  });
}

/** Whether an address may be sent to: public unicast only (not loopback, private, link-local, ...). */
export function classifyAddress(address: string): OutboundVerdict {
  const parsed = normalise(address);
  if (!parsed) return { allowed: false, reason: `${address} is not an IP address` };
  const range = parsed.range();
  if (PUBLIC_RANGES.has(range)) return { allowed: true };
  return { allowed: false, reason: `${parsed.toString()} is a ${range} address` };
}

/**
 * The host of an http(s) URL as the network will see it. WHATWG URL parsing
 * already turns decimal, octal and hex IPv4 forms (http://2130706433/,
 * http://0x7f.1/) into dotted quads and drops userinfo, so what is checked is
 * what is connected to.
 */
export function outboundTarget(url: string): { host: string; port: number; literal: string | null } | { error: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { error: `"${url}" is not a URL` };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { error: `${parsed.protocol} URLs are not sent to; use http or https` };
  const host = unbracket(parsed.hostname).replace(/\.$/, "");
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  return { host, port, literal: ipaddr.isValid(host) ? host : null };
}

/**
 * The verdict on a URL before any name is resolved: refused when its host is
 * a literal address outside the public ranges and not allowlisted. A host name
 * is checked again, on every address it resolves to, when it is sent to.
 */
export function checkUrlLiteral(url: string, allow: AllowEntry[]): OutboundVerdict {
  const target = outboundTarget(url);
  if ("error" in target) return { allowed: false, reason: target.error };
  if (isAllowlisted(allow, target)) return { allowed: true };
  if (target.host === "localhost" || target.host.endsWith(".localhost")) return { allowed: false, reason: `${target.host} is a loopback name` };
  return target.literal ? classifyAddress(target.literal) : { allowed: true };
}
