/**
 * The sessions of the sub-agent boundary-kill test, imported by the test and
 * by the Worker processes the loop kills. A writer asks a researcher
 * sub-agent about two topics in one response; each researcher records its
 * finding with a single-attempt write (`record_finding`,
 * non_idempotent_write), logged to an InvocationLog outside the store, and
 * answers `findings on <topic>`; the writer answers with both findings.
 */
import { join } from "node:path";
import type { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { agentTool } from "../agent-tool.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import { ScriptedModelClient } from "../scripted-model-client.ts";

export const subAgentKillParentId = "writer-1";
export const subAgentKillWorkerId = "sub-agent-kill-worker";
export const subAgentKillDirectoryEnvironmentVariable = "PERDURE_SUB_AGENT_KILL_DIRECTORY";
export const subAgentKillTopics = ["tides", "winds"] as const;

export function subAgentKillLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "findings.log"));
}

/** The writer (first) and the researcher it calls, reaching child sessions through `client`. */
export function createSubAgentKillFlows(client: Client): [AgentSessionFlow, AgentSessionFlow] {
  const recordFinding = functionTool<{ topic: string }>({
    name: "record_finding", description: "Records a finding.", effect: "non_idempotent_write", requiresApproval: false,
    parameters: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
    execute: async ({ topic }, call) => {
      const directory = process.env[subAgentKillDirectoryEnvironmentVariable] ?? "";
      if (directory === "") throw new Error(`set ${subAgentKillDirectoryEnvironmentVariable}`);
      subAgentKillLog(directory).record("record_finding", { sessionId: call.flowId, topic, idempotencyKey: call.idempotencyKey });
      return `recorded ${topic}`;
    },
  });
  const researcherModel = new ScriptedModelClient((request) => {
    const topic = ScriptedModelClient.userTexts(request).at(-1) ?? "";
    if (ScriptedModelClient.toolResults(request).length > 0) return { text: `findings on ${topic}` };
    return { toolCalls: [{ name: "record_finding", id: "f1", arguments: { topic } }] };
  });
  const researcher = createStepwiseAgentSessionFlow({ name: "researcher", instructions: "Research.", model: researcherModel, tools: [recordFinding] }, "KillResearcher");
  const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic.", client });
  const writerModel = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: `Report: ${results.map((result) => result.output).join(" | ")}` };
    return { toolCalls: subAgentKillTopics.map((topic, index) => ({ name: "research", id: `r${index + 1}`, arguments: { task: topic } })) };
  });
  const writer = createStepwiseAgentSessionFlow({ name: "writer", instructions: "Write.", model: writerModel, tools: [research] }, "KillWriter");
  return [writer, researcher];
}
