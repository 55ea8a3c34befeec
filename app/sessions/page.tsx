import { AppShell } from "@/components/app-shell";
import { SessionList } from "@/components/session-list";

export default function SessionsPage() {
  return (
    <AppShell>
      <h1 className="mb-4 text-lg font-semibold">Sessions</h1>
      <SessionList />
    </AppShell>
  );
}
