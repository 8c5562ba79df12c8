/**
 * A session for the scheduled-turn tests: `follow up` makes the agent call
 * its `schedule_turn` built-in tool (once, 2 seconds on, "check the
 * delivery"); `hold` runs a tool that waits until the test releases it, so a
 * schedule can come due while a turn runs; anything else is answered `ok:
 * <text>`.
 */
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply } from "../../../testing/scripted-agent-runner.ts";
import { createAgentSessionFlow } from "../../create-agent-session-flow.ts";

/** The seconds of the agent's own follow-up. */
export const followUpSeconds = 2;

let releaseHold: () => void = () => undefined;
let held = Promise.withResolvers<void>();

/** Lets the `hold` tool that waits (or the next one) finish. */
export function releaseHeldTool(): void {
  releaseHold();
}

/** Resolves once a `hold` tool runs. */
export function heldToolStarted(): Promise<void> {
  return held.promise;
}

function script(input: ScriptInput): ScriptReply {
  const request = input.userTexts.at(-1) ?? "";
  if (input.modelCall > 1) return { text: `done: ${input.previousResults.map((call) => call.output ?? "").join(" | ")}` };
  if (request === "follow up") return { toolCalls: [{ name: "schedule_turn", arguments: { after_seconds: followUpSeconds, text: "check the delivery" } }] };
  if (request === "hold") return { toolCalls: [{ name: "hold", arguments: {} }] };
  return { text: `ok: ${request}` };
}

const runner = new ScriptedAgentRunner(script, {
  hold: {
    effect: "read",
    execute: async () => {
      const released = new Promise<void>((resolve) => {
        releaseHold = resolve;
      });
      held.resolve();
      await released;
      held = Promise.withResolvers<void>();
      return "held";
    },
  },
});

export const scheduledTurnFlow = createAgentSessionFlow(runner, "ScheduledTurns", { builtInTools: ["schedule_turn"] });
