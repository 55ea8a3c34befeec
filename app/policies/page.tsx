// Policy rules: the list in evaluation order, the editor, the default gate and the dry run.
import { AppShell } from "@/components/app-shell";
import { PoliciesPage } from "@/components/policies/policies-page";

export default function Page() {
  return (
    <AppShell>
      <PoliciesPage />
    </AppShell>
  );
}
