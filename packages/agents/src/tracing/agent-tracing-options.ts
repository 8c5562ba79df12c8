/**
 * The `tracing` options of `createAgentSessionFlow`: OpenTelemetry GenAI
 * spans through `@opentelemetry/api`, an optional peer that is loaded only
 * when tracing is enabled.
 */
import { InvalidInputError } from "@perdure/engine";

/** The GenAI semantic conventions a session's spans follow. */
export type GenAISemanticConventionsVersion = "1.42.0-dev" | "1.36.0";

/**
 * The schema URL set on the tracer for each semantic conventions version.
 *
 * @example
 * const schemaUrl = genAISemanticConventionsSchemaUrls["1.42.0-dev"];
 */
export const genAISemanticConventionsSchemaUrls: Readonly<Record<GenAISemanticConventionsVersion, string>> = Object.freeze({
  "1.42.0-dev": "https://opentelemetry.io/schemas/1.42.0-dev",
  "1.36.0": "https://opentelemetry.io/schemas/1.36.0",
});

/**
 * Any OpenTelemetry `TracerProvider` (`NodeTracerProvider`,
 * `BasicTracerProvider`, the global one); typed structurally so that this
 * package's types do not need `@opentelemetry/api`.
 */
export interface OpenTelemetryTracerProvider {
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): unknown;
}

/**
 * How a session Flow emits OpenTelemetry spans.
 *
 * @example
 * const tracerProvider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
 * const flow = createAgentSessionFlow(runner, "TriageAgent", { tracing: { tracerProvider, agentName: "Triage" } });
 */
export interface AgentTracingOptions {
  /**
   * `false` emits nothing and never loads `@opentelemetry/api`.
   * @default true
   */
  isEnabled?: boolean;
  /**
   * The provider to emit with.
   * @default the global tracer provider, looked up when a Step emits a span
   */
  tracerProvider?: OpenTelemetryTracerProvider;
  /**
   * `gen_ai.agent.name` and the `invoke_agent` span name.
   * @default the Flow type
   */
  agentName?: string;
  /**
   * Put message text, tool arguments and tool results on spans (never with `"1.36.0"`).
   * @default false
   */
  shouldCaptureMessageContent?: boolean;
  /**
   * The GenAI semantic conventions the spans follow.
   * @default "1.42.0-dev"
   */
  semanticConventionsVersion?: GenAISemanticConventionsVersion;
}

export interface ResolvedAgentTracingOptions {
  isEnabled: boolean;
  /** Undefined: the global provider. */
  tracerProvider: OpenTelemetryTracerProvider | undefined;
  agentName: string;
  shouldCaptureMessageContent: boolean;
  semanticConventionsVersion: GenAISemanticConventionsVersion;
}

function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new InvalidInputError(`tracing.${name} ${JSON.stringify(value)} is invalid: use true or false`);
  return value;
}

/** Validates the `tracing` options and fills in every default (written once, here and in the TSDoc above). */
export function resolveAgentTracingOptions(options: AgentTracingOptions | undefined, flowType: string): ResolvedAgentTracingOptions {
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new InvalidInputError(`tracing ${JSON.stringify(options)} is invalid: use an object such as { isEnabled: false }`);
  }
  const tracing = options ?? {};
  const provider = tracing.tracerProvider;
  if (provider !== undefined && typeof (provider as { getTracer?: unknown } | null)?.getTracer !== "function") {
    throw new InvalidInputError("tracing.tracerProvider is invalid: use an OpenTelemetry TracerProvider, an object with a getTracer method");
  }
  const agentName = tracing.agentName ?? flowType;
  if (typeof agentName !== "string" || agentName.trim() === "") {
    throw new InvalidInputError(`tracing.agentName ${JSON.stringify(agentName)} is invalid: use a non-empty name`);
  }
  const version = tracing.semanticConventionsVersion ?? "1.42.0-dev";
  if (!Object.hasOwn(genAISemanticConventionsSchemaUrls, version)) {
    throw new InvalidInputError(`tracing.semanticConventionsVersion ${JSON.stringify(version)} is invalid: use "1.42.0-dev" or "1.36.0"`);
  }
  return {
    isEnabled: booleanOption("isEnabled", tracing.isEnabled, true),
    tracerProvider: provider,
    agentName,
    shouldCaptureMessageContent: booleanOption("shouldCaptureMessageContent", tracing.shouldCaptureMessageContent, false),
    semanticConventionsVersion: version,
  };
}
