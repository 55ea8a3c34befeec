// One session: live task tree, per-task timeline and state.
import { Suspense } from "react";
import { AppShell } from "@/components/app-shell";
import { SessionView } from "@/components/session/session-view";

export default function SessionPage() {
  return (
    <AppShell fill>
      <Suspense>
        <SessionView />
      </Suspense>
    </AppShell>
  );
}
