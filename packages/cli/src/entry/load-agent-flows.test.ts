import assert from "node:assert/strict";
import { test } from "node:test";
import { createStepwiseAgentSessionFlow, ScriptedModelClient } from "@perdure/agents/stepwise";
import { agentFlowsOf } from "./load-agent-flows.ts";

const model = new ScriptedModelClient(() => ({ text: "hi" }));

test("two exported agents with one Flow type are refused naming both exports; one Flow exported twice counts once", () => {
  const support = createStepwiseAgentSessionFlow({ name: "support", instructions: "Help.", model }, "SupportAgent");
  const copy = createStepwiseAgentSessionFlow({ name: "support-copy", instructions: "Help too.", model }, "SupportAgent");
  assert.throws(() => agentFlowsOf({ supportAgent: support, helper: 5, calendarAgent: copy }, "perdure.agents.ts"), {
    name: "InvalidInputError",
    message: 'entry module perdure.agents.ts exports two agent session Flows with Flow type "SupportAgent": supportAgent and calendarAgent; give each its own Flow type (the second argument of createStepwiseAgentSessionFlow)',
  });
  const flows = agentFlowsOf({ supportAgent: support, default: support }, "perdure.agents.ts");
  assert.deepEqual([...flows.keys()], ["SupportAgent"]);
});
