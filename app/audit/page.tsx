// The audit log: every decision and administrative action, with the hash-chain verdict.
import { Suspense } from "react";
import { AppShell } from "@/components/app-shell";
import { AuditLog } from "@/components/audit-log";

export default function AuditPage() {
  return (
    <AppShell>
      <Suspense>
        <AuditLog />
      </Suspense>
    </AppShell>
  );
}
