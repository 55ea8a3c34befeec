// A helper for domain tests: the DomainError a call throws, to assert on its code and message.
import { DomainError } from "./errors.ts";

export function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a DomainError, nothing was thrown");
}
