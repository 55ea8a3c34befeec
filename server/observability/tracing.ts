// OpenTelemetry spans for the use cases: one server span per API call, a child
// of the agent's own span when it sent a W3C `traceparent`, with a child span
// per database statement, exported over OTLP/HTTP. On only when an exporter
// endpoint is configured through the standard variables
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; also
// OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY);
// otherwise nothing is created and a call costs one boolean check.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";

let enabled = false;

export interface Tracing {
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

export function startTracing(environment: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (!environment.OTEL_EXPORTER_OTLP_ENDPOINT && !environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: environment.OTEL_SERVICE_NAME ?? "tollgate", "service.instance.id": `${process.pid}` }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Also installs the W3C trace-context propagator and an AsyncLocalStorage
  // context manager, so a statement's span finds the call it belongs to.
  provider.register();
  enabled = true;
  return {
    async shutdown() {
      enabled = false;
      await provider.shutdown();
    },
  };
}

export const tracingEnabled = () => enabled;

const tracer = () => trace.getTracer("tollgate");

/** Runs one API call inside a server span, continuing the caller's trace when it sent a `traceparent`. */
export function inCallSpan<T>(name: string, traceparent: string | undefined, attributes: Attributes, run: (span: Span) => Promise<T>): Promise<T> {
  const parent = traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
  return tracer().startActiveSpan(name, { kind: SpanKind.SERVER, attributes }, parent, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      failed(span, error instanceof Error ? error.message : String(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Runs a database statement inside a client span under the current call's span. */
export function inStatementSpan<T>(kind: "query" | "execute", inTransaction: boolean, run: () => Promise<T>): Promise<T> {
  if (!enabled || !trace.getActiveSpan()) return run();
  return tracer().startActiveSpan(
    `db.${kind}`,
    { kind: SpanKind.CLIENT, attributes: { "db.system.name": "postgresql", "tollgate.in_transaction": inTransaction } },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        failed(span, error instanceof Error ? error.message : String(error));
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

export function failed(span: Span, message: string, code?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  if (code) span.setAttribute("tollgate.error_code", code);
}

/** Names who called on the current call's span (known only once the caller is authenticated). */
export function noteCaller(attributes: Attributes): void {
  if (enabled) trace.getActiveSpan()?.setAttributes(attributes);
}
