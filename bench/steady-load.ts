// The sustained load's loop, shared by npm run bench and bench/side-by-side.ts:
// every agent asks and waits on its own request, again and again, first for a
// warm-up (the JIT and the pools settle), then for the timed window. The
// agents' requests are begun before either, so no begin falls in the window.

/** What one agent's ask came back with. */
export interface Answer {
  status: string;
  approvalId: string;
}

/**
 * Runs `agents` (each one ask at a time) for `warmUpSeconds`, then for
 * `seconds`; `approved` says whether an answer counts as a round trip (and
 * may keep its own tally of the others). Returns the round trips counted in
 * each phase and the timed window's length in seconds.
 */
export async function askSteadily(
  agents: (() => Promise<Answer>)[],
  warmUpSeconds: number,
  seconds: number,
  approved: (answer: Answer) => boolean,
): Promise<{ warmUp: number; measured: number; elapsedSeconds: number }> {
  const askUntil = async (deadline: number) => {
    let counted = 0;
    await Promise.all(
      agents.map(async (ask) => {
        while (performance.now() < deadline) if (approved(await ask())) counted += 1;
      }),
    );
    return counted;
  };
  const warmUp = await askUntil(performance.now() + warmUpSeconds * 1000);
  const started = performance.now();
  const measured = await askUntil(started + seconds * 1000);
  return { warmUp, measured, elapsedSeconds: (performance.now() - started) / 1000 };
}
