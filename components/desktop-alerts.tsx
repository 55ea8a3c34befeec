"use client";
// Browser notifications, opt-in per operator and browser: a new approval, and
// one about to expire, raise a system notification that opens it when clicked.
import { useCallback, useEffect, useState } from "react";

const SETTING_KEY = "tollgate.desktopAlerts";
const EXPIRY_WARNING_MS = 60_000;

export function desktopAlertsOn(): boolean {
  return typeof window !== "undefined" && "Notification" in window && Notification.permission === "granted" && window.localStorage.getItem(SETTING_KEY) === "on";
}

function show(title: string, body: string, approvalId: string): void {
  const notification = new Notification(title, { body, tag: approvalId });
  notification.onclick = () => {
    window.focus();
    window.location.assign(`/approvals/${approvalId}`);
  };
}

export interface RequestedEvent {
  approvalId: string;
  tool: string;
  args: unknown;
  status: string;
  expiresAt: string | null;
}

/**
 * Announces a new approval, and arms one more notice a minute before it
 * expires; `stillPending` is asked then, so a decided approval stays quiet.
 */
export function alertNewApproval(event: RequestedEvent, stillPending: (approvalId: string) => Promise<boolean>): (() => void) | null {
  if (!desktopAlertsOn() || event.status !== "PENDING") return null;
  show(`Approval needed: ${event.tool}`, "Open it in Tollgate to decide.", event.approvalId);
  if (!event.expiresAt) return null;
  const warnIn = new Date(event.expiresAt).getTime() - Date.now() - EXPIRY_WARNING_MS;
  if (warnIn <= 0) return null;
  const timer = setTimeout(() => {
    void stillPending(event.approvalId).then((pending) => {
      if (pending && desktopAlertsOn()) show(`Expiring in a minute: ${event.tool}`, "Decide it now, or its timeout applies.", event.approvalId);
    });
  }, warnIn);
  return () => clearTimeout(timer);
}

/** The header's switch: asks the browser for permission the first time it is turned on. */
export function DesktopAlertsToggle() {
  const [state, setState] = useState<"unsupported" | "on" | "off" | "blocked">("off");
  useEffect(() => {
    if (!("Notification" in window)) setState("unsupported");
    else if (Notification.permission === "denied") setState("blocked");
    else setState(desktopAlertsOn() ? "on" : "off");
  }, []);
  const toggle = useCallback(async () => {
    if (state === "on") {
      window.localStorage.setItem(SETTING_KEY, "off");
      return setState("off");
    }
    const permission = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
    if (permission !== "granted") return setState(permission === "denied" ? "blocked" : "off");
    window.localStorage.setItem(SETTING_KEY, "on");
    setState("on");
  }, [state]);
  if (state === "unsupported") return null;
  return (
    <button
      type="button"
      onClick={() => void toggle()}
      disabled={state === "blocked"}
      aria-pressed={state === "on"}
      title={state === "blocked" ? "Notifications are blocked for this site in the browser's settings" : "System notifications for new approvals and ones about to expire"}
      className="rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100 disabled:opacity-50"
    >
      Desktop alerts: {state === "on" ? "on" : state === "blocked" ? "blocked" : "off"}
    </button>
  );
}
