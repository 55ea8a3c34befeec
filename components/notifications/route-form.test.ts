import { describe, expect, it } from "vitest";
import { describeRoute } from "./describe-route";
import { routeFormFrom, routeFromForm } from "./route-form";

describe("routing form", () => {
  it("route form: an untouched form asks for no route", () => {
    expect(routeFromForm(routeFormFrom(null))).toEqual({ ok: true, route: null });
  });

  it("route form: a group, an escalation and a reminder round-trip; later API steps are kept", () => {
    const route = {
      to: { group: "finance" },
      escalate: [
        { afterSeconds: 600, to: { role: "ADMIN" as const } },
        { afterSeconds: 1800, to: { operators: ["ada@example.com"] } },
      ],
      remindBeforeExpirySeconds: 300,
    };
    const form = routeFormFrom(route);
    expect(form.escalateAfter).toEqual({ amount: "10", unit: "m" });
    expect(routeFromForm(form)).toEqual({ ok: true, route });
  });

  it("route form: an escalation time without anyone to ask, or a bad email, is refused naming the field", () => {
    const form = { ...routeFormFrom(null), escalateAfter: { amount: "5", unit: "m" as const } };
    expect(routeFromForm(form)).toEqual({ ok: false, error: "route.escalate: say who is asked next (a role, a group or operators)" });
    expect(routeFromForm({ ...routeFormFrom(null), operators: "not-an-email" })).toMatchObject({ ok: false, error: expect.stringMatching(/^route\.to\.operators\.0: /) });
  });

  it("route in words", () => {
    expect(describeRoute({ to: { group: "finance" }, escalate: [{ afterSeconds: 600, to: { role: "ADMIN" } }], remindBeforeExpirySeconds: 300, channels: ["ops-slack"] })).toBe(
      "asks group finance; after 10 min asks admins; reminds 5 min before expiry; on ops-slack",
    );
  });
});
