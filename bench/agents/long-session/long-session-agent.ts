/**
 * The agent of the long-session benchmark: a Stepwise agent with one `read`
 * tool on the scripted model, and a compaction policy small enough that the
 * session compacts every few dozen turns. Each turn asks for one tool call
 * and then answers with its result, storing 4 messages (user text, model
 * output with the call, tool result, final model output).
 */
import { createStepwiseAgentSessionFlow, contextSummaryInstructions, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";
import type { AgentSessionFlow, CompactionPolicy } from "@perdure/agents";
import type { FinalAnswerSignals } from "../scripted-runner.ts";

/** The tool every turn calls once. */
export const longSessionToolName = "lookup_order";

/**
 * A window small enough that the session compacts every dozen turns or so:
 * the trigger is 0.85 × 4,000 estimated tokens (4 characters of JSON per
 * token, instructions and tool definition included), and a compaction keeps
 * at most 0.3 × 4,000.
 */
export const longSessionCompaction: CompactionPolicy = { contextWindowTokens: 4_000 };

/** What the long session counts while it runs; read by the benchmark to check the run. */
export interface LongSessionCounters {
  toolRuns: number;
  modelCalls: number;
  summaryCalls: number;
}

function replyOf(request: ModelRequest, counters: LongSessionCounters, signals: FinalAnswerSignals): ScriptedModelReply {
  if (request.instructions === contextSummaryInstructions) {
    counters.summaryCalls += 1;
    // A summary of fixed size, so a later input's estimate does not grow with the number of compactions.
    return { text: `Summary ${counters.summaryCalls}: the customer asked about several orders; each was looked up and reported shipped.` };
  }
  counters.modelCalls += 1;
  const results = ScriptedModelClient.toolResults(request);
  if (results.length === 0) {
    // Compaction drops earlier model outputs from the input, so the call ID is explicit (see the Stepwise compaction ADR).
    return { text: "Let me look that up.", toolCalls: [{ id: `lookup-${request.turnId}`, name: longSessionToolName, arguments: { order_id: request.turnId } }] };
  }
  signals.signal(request.flowId);
  return { text: `Order ${request.turnId}: ${results.map((result) => result.output).join(", ")}.` };
}

/**
 * The benchmark's Stepwise session Flow and the counters its model and tool
 * keep. Without compaction (the baseline), every model call's input is the
 * whole transcript and retention never deletes.
 */
export function createLongSessionFlow(signals: FinalAnswerSignals, options: { compaction: boolean }): { flow: AgentSessionFlow; counters: LongSessionCounters } {
  const counters: LongSessionCounters = { toolRuns: 0, modelCalls: 0, summaryCalls: 0 };
  const lookupOrder = functionTool<{ order_id: string }>({
    name: longSessionToolName,
    description: "Look up an order by its ID.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    effect: "read",
    execute: async ({ order_id }) => {
      counters.toolRuns += 1;
      return `order ${order_id} shipped`;
    },
  });
  const model = new ScriptedModelClient((request) => replyOf(request, counters, signals), { maxRecordedRequests: 1 });
  const flow = createStepwiseAgentSessionFlow({
    name: "long-session",
    instructions: "You help customers with their orders. Look each order up before you answer.",
    model,
    tools: [lookupOrder],
    compaction: options.compaction ? longSessionCompaction : null,
  }, "LongSessionAgent");
  return { flow, counters };
}
