/**
 * OpenTelemetry export for `perdure dev`: when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, registers a global
 * tracer provider that sends the sessions' spans over OTLP/HTTP (JSON). The
 * SDK and the exporter load only then.
 */

/** The tracer provider `perdure dev` registered, flushed and shut down with the server. */
export interface DevTracing {
  /** Where spans go, for the start banner, with its credentials masked ({@link redactEndpoint}). */
  endpoint: string;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** The service name of the spans' resource unless `OTEL_SERVICE_NAME` names one. */
export const devServiceName = "perdure-dev";

/** The endpoint spans go to, or undefined when neither OTLP variable is set. */
export function otlpTracesEndpoint(environment: NodeJS.ProcessEnv): string | undefined {
  const traces = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces !== undefined && traces !== "") return traces;
  const base = environment.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base === undefined || base === "") return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * An endpoint as it may be printed: a user name and password in it
 * (`http://user:secret@collector:4318`) and the values of its query
 * parameters (`?api_key=…`) become `***`. Text that is not a URL keeps only
 * what precedes an `@`-credential part, masked the same way.
 */
export function redactEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return endpoint.replace(/\/\/[^/@]*@/, "//***@").replace(/=[^&]*/g, "=***");
  }
  if (url.username !== "") url.username = "***";
  if (url.password !== "") url.password = "***";
  for (const name of new Set(url.searchParams.keys())) url.searchParams.set(name, "***");
  return url.toString();
}

/**
 * Registers the OTLP/HTTP tracer provider when the environment asks for it;
 * returns undefined otherwise. The exporter reads the other standard
 * variables (`OTEL_EXPORTER_OTLP_HEADERS`, timeouts) itself.
 */
export async function startDevTracing(environment: NodeJS.ProcessEnv = process.env): Promise<DevTracing | undefined> {
  const endpoint = otlpTracesEndpoint(environment);
  if (endpoint === undefined) return undefined;
  try {
    new URL(endpoint);
  } catch {
    const variable = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
    throw new Error(`${variable} ${JSON.stringify(redactEndpoint(environment[variable] ?? ""))} is not a URL; use one such as http://127.0.0.1:4318`);
  }
  const [{ OTLPTraceExporter }, { BatchSpanProcessor, NodeTracerProvider }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
  ]);
  const serviceName = environment.OTEL_SERVICE_NAME?.trim() || devServiceName;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  });
  // Global: the sessions use the global provider by default, and the context manager makes tool spans active.
  provider.register();
  return { endpoint: redactEndpoint(endpoint), shutdown: () => provider.shutdown() };
}
