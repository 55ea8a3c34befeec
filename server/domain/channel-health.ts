// Whether a notification channel is failing, from its latest announcements:
// shown on the Notifications page, so a channel that stopped delivering is
// seen there and not only on each approval it failed for. Pure.

export interface Attempted {
  status: "PENDING" | "DELIVERED" | "FAILED";
  attempts: number;
  lastError: string | null;
}

/** How many of the latest announcements, failing one after the other, make a channel "failing". */
export const FAILING_AFTER = 3;

/**
 * The latest announcements first. One counts as failed when it gave up
 * (FAILED) or is still being retried after an error; the run of failures is
 * counted from the latest tried one (one queued and not yet tried says
 * nothing), so one delivery since ends it.
 */
export function channelHealth(latestFirst: readonly Attempted[]): { failing: boolean; failuresInARow: number; lastError: string | null } {
  const tried = latestFirst.filter((entry) => entry.status !== "PENDING" || entry.attempts > 0);
  const failed = (entry: Attempted) => entry.status === "FAILED" || (entry.status === "PENDING" && entry.lastError !== null);
  let failuresInARow = 0;
  while (failuresInARow < tried.length && failed(tried[failuresInARow]!)) failuresInARow++;
  return { failing: failuresInARow >= FAILING_AFTER, failuresInARow, lastError: failuresInARow > 0 ? tried[0]!.lastError : null };
}
