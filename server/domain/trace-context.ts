// W3C Trace Context: the `traceparent` an agent sends with its calls, so a
// request in Tollgate can be found from the agent's trace and the decision
// webhook continues it.
// https://www.w3.org/TR/trace-context/#traceparent-header

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The header when it is a valid version-00 traceparent (ids not all zeros);
 * otherwise undefined: the specification says to ignore an invalid one, not
 * to refuse the call.
 */
export function parseTraceparent(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  const match = value ? TRACEPARENT.exec(value) : null;
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return value;
}

/** The trace id part (32 hex digits), for logs and searches. */
export const traceIdOf = (traceparent: string) => traceparent.slice(3, 35);
