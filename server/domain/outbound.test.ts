import { describe, expect, it } from "vitest";
import { checkUrlLiteral, classifyAddress, isAllowlisted, parseAllowlist } from "./outbound.ts";

describe("outbound: addresses", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.9.9.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrierGradeNat"],
    ["169.254.169.254", "linkLocal"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fd00::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["64:ff9b::a00:1", "rfc6052"],
  ])("outbound: %s is refused as %s", (address, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, reason: expect.stringContaining(range) });
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("outbound: public %s is allowed", (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });
});

describe("outbound: URLs before resolving", () => {
  it.each([
    ["http://127.0.0.1:8080/hook", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://evil.example@127.0.0.1/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["http://localhost:3000/", "loopback name"],
    ["http://LOCALHOST./", "loopback name"],
    ["http://api.localhost/", "loopback name"],
    ["ftp://example.com/", "ftp: URLs"],
    ["not a url", "not a URL"],
  ])("outbound: %s is refused (%s)", (url, reason) => {
    expect(checkUrlLiteral(url, [])).toEqual({ allowed: false, reason: expect.stringContaining(reason) });
  });

  it("outbound: a host name passes the literal check (its addresses are checked when sent to)", () => {
    expect(checkUrlLiteral("https://hooks.example.com/tollgate", [])).toEqual({ allowed: true });
  });

  it("outbound: the allowlist lets named destinations through, by host, host:port or range", () => {
    const allow = parseAllowlist("localhost:4000, 127.0.0.1/32, 10.1.0.0/16, hooks.internal");
    expect(checkUrlLiteral("http://localhost:4000/", allow)).toEqual({ allowed: true });
    expect(checkUrlLiteral("http://localhost:4001/", allow).allowed).toBe(false);
    expect(checkUrlLiteral("http://127.0.0.1:9/", allow)).toEqual({ allowed: true });
    expect(checkUrlLiteral("http://127.0.0.2:9/", allow).allowed).toBe(false);
    expect(checkUrlLiteral("http://10.1.200.3/", allow)).toEqual({ allowed: true });
    expect(isAllowlisted(allow, { host: "hooks.internal.", port: 443, address: "10.9.9.9" })).toBe(true);
    expect(isAllowlisted(allow, { host: "other.internal", port: 443, address: "::ffff:10.1.0.7" })).toBe(true);
    expect(isAllowlisted(allow, { host: "other.internal", port: 443, address: "10.2.0.7" })).toBe(false);
  });

  it.each(["10.0.0.0/99", "http://x", "a b"])("outbound: a bad allowlist entry %s is named", (entry) => {
    expect(() => parseAllowlist(entry)).toThrow(entry);
  });
});
