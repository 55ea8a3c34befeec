// One approval on its own page (links from the audit log, shared URLs).
import { AppShell } from "@/components/app-shell";
import { ApprovalPage } from "@/components/inbox/approval-page";

export default function Page() {
  return (
    <AppShell>
      <ApprovalPage />
    </AppShell>
  );
}
