// The landing page: the live approval inbox.
import { Suspense } from "react";
import { AppShell } from "@/components/app-shell";
import { Inbox } from "@/components/inbox/inbox";

export default function InboxPage() {
  return (
    <AppShell fill>
      <Suspense>
        <Inbox />
      </Suspense>
    </AppShell>
  );
}
