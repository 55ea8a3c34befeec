// Durable runs, on the agent's side: what an adapter meets when another
// process drives the run it was asked to begin or continue.

/** Another live process drives the durable run: this one must not ask or run anything for it. */
export class RunDrivenElsewhereError extends Error {
  constructor(
    readonly runId: string,
    detail: string,
  ) {
    super(detail);
    this.name = "RunDrivenElsewhereError";
  }
}
