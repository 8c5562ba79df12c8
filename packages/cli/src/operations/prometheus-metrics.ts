/**
 * The metrics pipeline of `perdure worker` and `perdure dev` with
 * `--metrics-port`: an OpenTelemetry MeterProvider whose reader is the
 * OpenTelemetry Prometheus exporter, registered as the global provider so
 * that the engine's Workers and the agent sessions record into it.
 */
import { metrics } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { IncomingMessage, ServerResponse } from "node:http";

/** A MeterProvider with a Prometheus reader, served by the operations server. */
export interface PrometheusMetrics {
  meterProvider: MeterProvider;
  /** Answers a scrape in the Prometheus text format. */
  handleScrape(request: IncomingMessage, response: ServerResponse): void;
  shutdown(): Promise<void>;
}

/** Creates the provider and makes it the global one. */
export function startPrometheusMetrics(): PrometheusMetrics {
  // The operations server serves the scrape itself, behind its guards; the exporter's own server never starts.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    meterProvider,
    handleScrape: (request, response) => exporter.getMetricsRequestHandler(request, response),
    shutdown: async () => {
      await meterProvider.shutdown();
      metrics.disable();
    },
  };
}
