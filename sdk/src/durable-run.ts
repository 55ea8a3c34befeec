// Runs, on the agent's side: how a run an adapter drives ends other than by
// finishing (another process drives it, or one of its approvals was canceled).

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

/**
 * An approval of the run was canceled (its timeout said so, or its request or
 * task ended): every adapter stops the run there, with nothing more of it run
 * and the model not asked to go on, and fails its request (APPROVAL_CANCELED).
 */
export class RunCanceledError extends Error {
  constructor(
    readonly approvalId: string,
    options?: { cause?: unknown },
  ) {
    super(`approval ${approvalId} was canceled, so the run stopped there: nothing more of it ran and the model was not asked to go on`, options);
    this.name = "RunCanceledError";
  }
}
