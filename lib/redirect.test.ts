import { describe, expect, it } from "vitest";
import { safeRedirectPath } from "./redirect.ts";

const ORIGIN = "https://tollgate.example";

describe("safeRedirectPath", () => {
  it.each([
    ["/", "/"],
    ["/sessions", "/sessions"],
    ["/?approval=apr_1", "/?approval=apr_1"],
    ["/audit?action=operator.login#top", "/audit?action=operator.login#top"],
    ["/sessions/../audit", "/audit"],
    ["/x?next=//evil.example", "/x?next=//evil.example"],
    [`${ORIGIN}/audit`, "/audit"],
  ])("redirect: keeps the same-origin path %j as %j", (target, expected) => {
    expect(safeRedirectPath(target, ORIGIN)).toBe(expected);
  });

  it.each([
    ["//evil.example"],
    ["///evil.example"],
    ["/\\evil.example"],
    ["\\\\evil.example"],
    ["\\/evil.example"],
    [decodeURIComponent("/%5Cevil.example")],
    [decodeURIComponent("/%09/evil.example")],
    ["/\t/evil.example"],
    ["/\n/evil.example"],
    ["/\r\n/evil.example"],
    ["\t//evil.example"],
    [" //evil.example"],
    ["/.//evil.example"],
    ["/a/..//evil.example"],
    ["javascript:alert(1)"],
    ["JavaScript:alert(1)"],
    ["java\tscript:alert(1)"],
    ["data:text/html,<script>alert(1)</script>"],
    ["https://evil.example/"],
    ["http://tollgate.example/"],
    ["https://tollgate.example.evil.example/"],
    ["https://tollgate.example@evil.example/"],
    ["http:evil.example"],
    ["//tollgate.example@evil.example"],
    ["http://[::1"],
  ])("redirect: refuses %j, going to / instead", (target) => {
    expect(safeRedirectPath(target, ORIGIN)).toBe("/");
  });

  it("redirect: nothing to return to goes to /", () => {
    expect(safeRedirectPath(null, ORIGIN)).toBe("/");
    expect(safeRedirectPath("", ORIGIN)).toBe("/");
  });
});
