"use client";
// Query cache and tRPC client for every page of the console. Any call refused for
// a missing or expired session sends the operator to log in, keeping the URL.
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpLink, splitLink, TRPCClientError } from "@trpc/client";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/api/router";
import { TRPCProvider } from "@/lib/trpc";

function isUnauthorized(error: unknown): boolean {
  return error instanceof TRPCClientError && error.data?.code === "UNAUTHORIZED";
}

function isClientError(error: unknown): boolean {
  const status = error instanceof TRPCClientError ? (error.data as { httpStatus?: number } | undefined)?.httpStatus : undefined;
  return status !== undefined && status >= 400 && status < 500;
}

export function loginUrlKeepingHere(): string {
  const here = `${window.location.pathname}${window.location.search}`;
  return `/login?next=${encodeURIComponent(here)}`;
}

// Set while this page replaces its session with another (a workspace switch) and
// then loads afresh: the server ends the old session and closes its live
// connection at once, so a check of the old session made meanwhile is refused,
// and must not send the operator to log in (the switch itself still may).
let sessionBeingReplaced = false;

export function markSessionBeingReplaced(replacing: boolean) {
  sessionBeingReplaced = replacing;
}

export function isSessionBeingReplaced(): boolean {
  return sessionBeingReplaced;
}

function sendToLogin(error: unknown) {
  if (!isUnauthorized(error) || typeof window === "undefined") return;
  if (window.location.pathname === "/login") return;
  window.location.replace(loginUrlKeepingHere());
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        queryCache: new QueryCache({
          onError: (error) => {
            if (!sessionBeingReplaced) sendToLogin(error);
          },
        }),
        mutationCache: new MutationCache({ onError: sendToLogin }),
        defaultOptions: {
          queries: {
            staleTime: 5_000,
            // A 4xx (unknown id, forbidden, bad input) will not change on retry.
            retry: (failures, error) => !isClientError(error) && failures < 2,
          },
        },
      }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        // The server refuses logins inside a batch (each guess must be one request).
        splitLink({
          condition: (operation) => operation.path === "auth.login",
          true: httpLink({ url: "/api/trpc" }),
          false: httpBatchLink({ url: "/api/trpc", maxItems: 50 }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
