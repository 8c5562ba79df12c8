/**
 * The session Flow of the cross-process tracing test. Its `lookup_order`
 * tool parks at a FileGate on its first attempt, so the test can SIGKILL the
 * Worker there and let another process run the retry. In a Worker child
 * (with `PERDURE_TRACING_TEST_DIRECTORY` set) it exports spans to
 * `spans.jsonl` in that folder; elsewhere tracing is off.
 */
import { join } from "node:path";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { createAgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { FileSpanExporter } from "./file-span-exporter.ts";
import { TracedSessionRunner } from "./traced-session-runner.ts";

export const tracingTestDirectoryVariable = "PERDURE_TRACING_TEST_DIRECTORY";
export const toolGateName = "lookup-order-first-attempt";
export const spansFileName = "spans.jsonl";

const directory = process.env[tracingTestDirectoryVariable];
const tracing = directory === undefined
  ? { isEnabled: false }
  : { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new FileSpanExporter(join(directory, spansFileName)))] }), agentName: "CrossProcess" };

const runner = new TracedSessionRunner(
  (input) => input.modelCall === 1 ? { toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }] } : { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` },
  {
    lookup_order: {
      effect: "read",
      execute: async (args, call) => {
        if (call.attempt === 1 && directory !== undefined) await new FileGate(directory, toolGateName).waitUntilOpen({ signal: call.cancellationSignal });
        return `order ${String(args.order_id)}: shipped`;
      },
    },
  },
);

export const crossProcessTracingFlow = createAgentSessionFlow(runner, "CrossProcessTraced", { tracing });
