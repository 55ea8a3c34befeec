// What the console calls a session: its title, never its raw id. Sessions with
// the same title (or none) are told apart by when they started, to the second,
// and by their id's last characters only when even that is the same.
import { groupBy } from "@/server/domain/group-by";
import { formatTime } from "./format";

export interface LabelledSession {
  id: string;
  title: string | null;
  createdAt: string;
}

export function sessionLabels(sessions: readonly LabelledSession[]): Map<string, string> {
  const base = (session: LabelledSession) => session.title?.trim() || "Untitled session";
  const byBase = groupBy(sessions, base);
  const labels = new Map<string, string>();
  for (const [title, same] of byBase) {
    const started = groupBy(same, (session) => formatTime(session.createdAt));
    for (const session of same) {
      if (same.length === 1 && session.title?.trim()) labels.set(session.id, title);
      else if (started.get(formatTime(session.createdAt))!.length === 1) labels.set(session.id, `${title} · started ${formatTime(session.createdAt)}`);
      else labels.set(session.id, `${title} · started ${formatTime(session.createdAt)} · …${session.id.slice(-6)}`);
    }
  }
  return labels;
}
