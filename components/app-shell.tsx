"use client";
// The console's frame: who is logged in, the live-connection indicator, and
// navigation. Sends the operator to the login page (keeping the URL) when the
// session is missing or expired.
import { useMutation, useQuery } from "@tanstack/react-query";
import { PendingTitle } from "./pending-title";
import { DecisionToasts } from "./decision-toasts";
import { DesktopAlertsToggle } from "./desktop-alerts";
import { TRPCClientError } from "@trpc/client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { createContext, useContext, useEffect, type ReactNode } from "react";
import { useTRPC } from "@/lib/trpc";
import { LiveUpdates, useConnectionState } from "./live-updates";
import { isSessionBeingReplaced, loginUrlKeepingHere } from "./providers";
import { WorkspaceSwitcher } from "./workspace-switcher";

export interface CurrentOperator {
  id: string;
  email: string;
  name: string;
  role: "ADMIN" | "OPERATOR" | "VIEWER";
}

const OperatorContext = createContext<CurrentOperator | null>(null);

/** The logged-in operator; only inside AppShell. */
export function useOperator(): CurrentOperator {
  const operator = useContext(OperatorContext);
  if (!operator) throw new Error("useOperator outside AppShell");
  return operator;
}

export const canDecide = (operator: CurrentOperator) => operator.role === "ADMIN" || operator.role === "OPERATOR";

/** On a phone first in the header's row (the rest scrolls sideways), so the connection's state is never off-screen. */
function ConnectionIndicator() {
  const state = useConnectionState();
  const label = { connecting: "Connecting…", live: "Live", lost: "Live updates lost — reconnecting" }[state];
  const color = { connecting: "bg-amber-400", live: "bg-emerald-500", lost: "bg-red-500" }[state];
  return (
    <span role="status" aria-label={`Connection: ${label}`} className="order-first flex shrink-0 items-center gap-2 text-xs text-slate-600 sm:order-none sm:ml-auto">
      <span className={`inline-block h-2 w-2 rounded-full ${color}`} aria-hidden />
      {label}
    </span>
  );
}

const NAV = [
  { href: "/", label: "Inbox", match: (path: string) => path === "/" || path.startsWith("/approvals") },
  { href: "/sessions", label: "Sessions", match: (path: string) => path.startsWith("/sessions") },
  { href: "/policies", label: "Policies", match: (path: string) => path.startsWith("/policies") },
  { href: "/notifications", label: "Notifications", match: (path: string) => path.startsWith("/notifications") },
  { href: "/access", label: "Access", match: (path: string) => path.startsWith("/access") },
  { href: "/audit", label: "Audit log", match: (path: string) => path.startsWith("/audit") },
];

export function AppShell({ children, fill = false }: { children: ReactNode; fill?: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const me = useQuery(trpc.auth.me.queryOptions(undefined, { staleTime: 60_000 }));
  const logout = useMutation(trpc.auth.logout.mutationOptions({ onSettled: () => router.replace("/login") }));

  const unauthorized = me.error instanceof TRPCClientError && me.error.data?.code === "UNAUTHORIZED";
  useEffect(() => {
    if (unauthorized && !isSessionBeingReplaced()) router.replace(loginUrlKeepingHere());
  }, [unauthorized, router]);

  if (me.isPending || unauthorized) {
    return <main className="p-8 text-sm text-slate-500">Loading…</main>;
  }
  if (me.error) {
    return (
      <main role="alert" className="p-8 text-sm text-red-700">
        Could not reach Tollgate: {me.error.message}. Check that the server is running, then reload.
      </main>
    );
  }
  const operator = me.data.operator;

  return (
    <OperatorContext.Provider value={operator}>
      <LiveUpdates>
        <PendingTitle />
        <DecisionToasts />
        <div className={fill ? "flex h-screen flex-col" : "min-h-screen"}>
          {/* On a phone one row that scrolls sideways, so the page keeps its height for the approval. */}
          <header className="flex min-h-11 shrink-0 items-center gap-x-4 overflow-x-auto whitespace-nowrap border-b border-slate-200 bg-white px-3 py-1.5 sm:min-h-12 sm:flex-wrap sm:gap-x-6 sm:gap-y-1 sm:overflow-visible sm:whitespace-normal sm:px-6 sm:py-2">
            <nav className="flex items-center gap-x-4 text-sm sm:flex-wrap sm:gap-x-6 sm:gap-y-1" aria-label="Main">
              <span className="font-semibold tracking-tight">Tollgate</span>
              <WorkspaceSwitcher />
              {NAV.map((item) => {
                const active = item.match(pathname);
                return (
                  <Link
                    key={item.href}
                    href={item.href}
                    aria-current={active ? "page" : undefined}
                    className={active ? "font-medium text-slate-900 underline decoration-2 underline-offset-4 sm:underline-offset-[14px]" : "text-slate-600 hover:text-slate-900"}
                  >
                    {item.label}
                  </Link>
                );
              })}
            </nav>
            <ConnectionIndicator />
            <div className="flex items-center gap-x-4 text-sm sm:flex-wrap sm:gap-y-1">
              <DesktopAlertsToggle />
              <span data-testid="operator-identity">
                {operator.name} <span className="text-slate-500">({operator.role.toLowerCase()})</span>
              </span>
              <button
                type="button"
                onClick={() => logout.mutate()}
                className="rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100"
              >
                Log out
              </button>
            </div>
          </header>
          <main className={fill ? "min-h-0 flex-1" : "p-6"}>{children}</main>
        </div>
      </LiveUpdates>
    </OperatorContext.Provider>
  );
}
