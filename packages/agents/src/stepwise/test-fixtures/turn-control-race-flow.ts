/**
 * The session Flow of the seeded turn-control race test: a Stepwise agent
 * whose scripted model reads the tool calls to make from the user message
 * (`calls:<names>`), with a read tool, an approved write, a single-attempt
 * write, `ask_user` and `durable_wait`. Worker child processes run it; tool
 * runs are appended to an InvocationLog in the folder named by
 * `PERDURE_TURN_CONTROL_RACE_DIRECTORY`.
 */
import { join } from "node:path";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import type { ModelRequest } from "../model-client.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "../scripted-model-client.ts";

export const turnControlRaceDirectoryEnvironmentVariable = "PERDURE_TURN_CONTROL_RACE_DIRECTORY";

/** The calls a user message can ask for, by the name the test uses. */
export const raceCallNames = ["lookup", "refund", "charge", "ask", "wait"] as const;
export type RaceCallName = (typeof raceCallNames)[number];

export function turnControlRaceLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "turn-control-race.log"));
}

function logRun(toolName: string, context: { flowId: string; toolCallId: string; attempt: number }): void {
  const directory = process.env[turnControlRaceDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") throw new Error(`set ${turnControlRaceDirectoryEnvironmentVariable}`);
  turnControlRaceLog(directory).record(toolName, { flowId: context.flowId, toolCallId: context.toolCallId, attempt: context.attempt });
}

const emptyParameters = { type: "object", properties: {} } as const;

const lookup = functionTool({
  name: "lookup", description: "Reads.", parameters: emptyParameters, effect: "read",
  execute: async (_arguments, context) => {
    logRun("lookup", context);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return "looked up";
  },
});

const refund = functionTool({
  name: "refund", description: "Approved write.", parameters: emptyParameters, effect: "idempotent_write", requiresApproval: true,
  execute: async (_arguments, context) => {
    logRun("refund", context);
    return "refunded";
  },
});

const charge = functionTool({
  name: "charge", description: "Single-attempt write.", parameters: emptyParameters, effect: "non_idempotent_write", requiresApproval: false,
  execute: async (_arguments, context) => {
    logRun("charge", context);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return "charged";
  },
});

/** The calls the latest user text asks for: `calls:lookup,ask` makes a lookup and an ask_user call. */
function requestedCalls(request: ModelRequest): RaceCallName[] {
  const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const match = /calls:([a-z,]*)/.exec(text);
  return (match?.[1] ?? "").split(",").filter((name): name is RaceCallName => (raceCallNames as readonly string[]).includes(name));
}

function script(request: ModelRequest): ScriptedModelReply {
  const lastItem = request.input.at(-1);
  if (lastItem?.type === "tool_result") return { text: `done: ${ScriptedModelClient.toolResults(request).map((result) => result.output.slice(0, 20)).join(" | ")}` };
  const calls = requestedCalls(request);
  if (calls.length === 0) return { text: "nothing to do" };
  return {
    text: "working",
    toolCalls: calls.map((name, index) => {
      const id = `${request.turnId}-${index}-${name}`;
      if (name === "ask") return { name: "ask_user", id, arguments: { question: "Which?" } };
      if (name === "wait") return { name: "durable_wait", id, arguments: { duration_seconds: 3600, reason: "later" } };
      return { name, id };
    }),
  };
}

export const turnControlRaceFlow = createStepwiseAgentSessionFlow({
  name: "race", instructions: "Race.", model: new ScriptedModelClient(script), tools: [lookup, refund, charge], builtInTools: ["ask_user", "durable_wait"],
}, "TurnControlRace");
