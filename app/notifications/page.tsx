// Notification channels, the default routing and the groups it can ask.
import { AppShell } from "@/components/app-shell";
import { NotificationsPage } from "@/components/notifications/notifications-page";

export default function Page() {
  return (
    <AppShell>
      <NotificationsPage />
    </AppShell>
  );
}
