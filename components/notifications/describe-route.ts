// A route in words, apart from the route form: the form checks a route with
// the API's own schema (zod and the name rules' Unicode tables, over a
// megabyte of script), which the rule list that only shows routes need not load.
import type { Route } from "./route-form";

/** A route in words, for the rule list and the default. */
export function describeRoute(route: Route | null | undefined): string {
  if (!route) return "";
  const audience = (to: { role?: string; group?: string; operators?: string[] }) =>
    [...(to.operators ?? []), ...(to.group ? [`group ${to.group}`] : []), ...(to.role && !to.group && !to.operators?.length ? [to.role === "ADMIN" ? "admins" : "operators"] : [])].join(", ") || "everyone who can decide";
  const parts = [route.to ? `asks ${audience(route.to)}` : null];
  for (const step of route.escalate ?? []) parts.push(`after ${Math.round(step.afterSeconds / 60) || step.afterSeconds + " s"}${step.afterSeconds >= 60 ? " min" : ""} asks ${audience(step.to)}`);
  if (route.remindBeforeExpirySeconds) parts.push(`reminds ${Math.round(route.remindBeforeExpirySeconds / 60)} min before expiry`);
  if (route.channels?.length) parts.push(`on ${route.channels.join(", ")}`);
  return parts.filter(Boolean).join("; ");
}
