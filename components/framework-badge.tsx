// Which agent framework a task runs in, as a small label beside its agent.
import { frameworkName } from "@/lib/frameworks";

export function FrameworkBadge({ framework }: { framework: string | null }) {
  if (!framework) return null;
  return (
    <span data-testid="framework" title={`runs in ${frameworkName(framework)}`} className="shrink-0 rounded border border-sky-200 bg-sky-50 px-1 text-[10px] font-semibold text-sky-900">
      {frameworkName(framework)}
    </span>
  );
}
