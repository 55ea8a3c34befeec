import { AppShell } from "@/components/app-shell";
import { SessionList } from "@/components/session-list";

export default function DashboardPage() {
  return (
    <AppShell>
      <h1 className="mb-4 text-lg font-semibold">Dashboard</h1>
      <SessionList />
    </AppShell>
  );
}
