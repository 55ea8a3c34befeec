// Routing in a form: who is asked, one escalation step and the reminder, as
// text on screen and a Route on the wire. Steps beyond the first (set through
// the API) are kept as they are.
import type { z } from "zod";
import { zRoute } from "@/server/api/routers/policy.types";
import { durationFromMs, durationToMs, type DurationText } from "../policies/duration";

export type Route = z.input<typeof zRoute>;

export interface RouteForm {
  group: string;
  operators: string;
  channels: string;
  escalateAfter: DurationText;
  escalateRole: "" | "OPERATOR" | "ADMIN";
  escalateGroup: string;
  escalateOperators: string;
  remindBefore: DurationText;
  laterSteps: NonNullable<Route["escalate"]>;
}

const list = (text: string) =>
  text
    .split(/[,\s]+/)
    .map((item) => item.trim())
    .filter(Boolean);

export function routeFormFrom(route: Route | null | undefined): RouteForm {
  const [first, ...later] = route?.escalate ?? [];
  return {
    group: route?.to?.group ?? "",
    operators: (route?.to?.operators ?? []).join(", "),
    channels: (route?.channels ?? []).join(", "),
    escalateAfter: durationFromMs(first ? first.afterSeconds * 1000 : null),
    escalateRole: first?.to.role ?? "",
    escalateGroup: first?.to.group ?? "",
    escalateOperators: (first?.to.operators ?? []).join(", "),
    remindBefore: durationFromMs(route?.remindBeforeExpirySeconds ? route.remindBeforeExpirySeconds * 1000 : null),
    laterSteps: later,
  };
}

/** The route, null when the form asks for nothing special, or the error naming the field. */
export function routeFromForm(form: RouteForm): { ok: true; route: Route | null } | { ok: false; error: string } {
  const after = durationToMs(form.escalateAfter);
  if (!after.ok) return { ok: false, error: `route.escalate: ${after.message}` };
  const remind = durationToMs(form.remindBefore);
  if (!remind.ok) return { ok: false, error: `route.remindBeforeExpirySeconds: ${remind.message}` };
  const to = {
    ...(form.group.trim() ? { group: form.group.trim() } : {}),
    ...(list(form.operators).length ? { operators: list(form.operators) } : {}),
  };
  const escalateTo = {
    ...(form.escalateRole ? { role: form.escalateRole } : {}),
    ...(form.escalateGroup.trim() ? { group: form.escalateGroup.trim() } : {}),
    ...(list(form.escalateOperators).length ? { operators: list(form.escalateOperators) } : {}),
  };
  if (after.ms !== null && Object.keys(escalateTo).length === 0) return { ok: false, error: "route.escalate: say who is asked next (a role, a group or operators)" };
  const steps = [...(after.ms !== null ? [{ afterSeconds: Math.round(after.ms / 1000), to: escalateTo }] : []), ...form.laterSteps];
  const route: Route = {
    ...(Object.keys(to).length ? { to } : {}),
    ...(list(form.channels).length ? { channels: list(form.channels) } : {}),
    ...(steps.length ? { escalate: steps } : {}),
    ...(remind.ms !== null ? { remindBeforeExpirySeconds: Math.round(remind.ms / 1000) } : {}),
  };
  if (Object.keys(route).length === 0) return { ok: true, route: null };
  const parsed = zRoute.safeParse(route);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, error: `route.${issue.path.join(".")}: ${issue.message}` };
  }
  return { ok: true, route };
}
