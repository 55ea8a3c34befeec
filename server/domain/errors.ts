// The one error type the domain and services throw. Its code says what kind of
// failure it is; the transport maps codes to HTTP statuses in one place.

export type DomainErrorCode =
  | "BAD_INPUT"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PRECONDITION_FAILED"
  | "INVALID_TRANSITION"
  | "PAYLOAD_TOO_LARGE"
  | "TOO_MANY_REQUESTS";

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: DomainErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.details = details;
  }
}

export const notFound = (kind: string, id: string) =>
  new DomainError("NOT_FOUND", `${kind} ${id} does not exist in this workspace`);
