/**
 * Loads `@opentelemetry/api` with a dynamic import, once per process, only
 * when a session with tracing enabled first emits a span. Without the package
 * tracing is off and nothing is logged after one debug line.
 */
import type * as OpenTelemetryApi from "@opentelemetry/api";

/** The `@opentelemetry/api` module. */
export type OpenTelemetryApiModule = typeof OpenTelemetryApi;

const apiModuleName = "@opentelemetry/api";
let loading: Promise<OpenTelemetryApiModule | undefined> | undefined;
let loaded: OpenTelemetryApiModule | undefined;

/** The API module, or undefined when it is not installed. */
export function loadOpenTelemetryApi(): Promise<OpenTelemetryApiModule | undefined> {
  loading ??= import(apiModuleName).then(
    (module: OpenTelemetryApiModule) => {
      loaded = module;
      return module;
    },
    (error: unknown) => {
      console.debug(`perdure agents tracing: ${apiModuleName} is not installed; sessions emit no spans:`, error);
      return undefined;
    },
  );
  return loading;
}

/** The API module if an earlier `loadOpenTelemetryApi` finished loading it; avoids a microtask on every span. */
export function loadedOpenTelemetryApi(): OpenTelemetryApiModule | undefined {
  return loaded;
}
