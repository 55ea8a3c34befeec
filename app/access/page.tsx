// Who can call Tollgate: the workspace's agent keys and the operators' script tokens.
import { AccessPage } from "@/components/access/access-page";
import { AppShell } from "@/components/app-shell";

export default function Page() {
  return (
    <AppShell>
      <AccessPage />
    </AppShell>
  );
}
