/**
 * The session Flow that acts out a session program: a `ScriptedAgentRunner`
 * whose script and tools come from the program, and whose model calls fail
 * as the program says. Every real tool run is appended to an InvocationLog
 * outside the store before the tool returns or throws, so the oracle can
 * count how often each call really ran, across processes and kills.
 */
import type { AgentTurnContext, AgentTurnOutcome, DeferredToolExecution } from "../../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../../contract/tool-execution-error.ts";
import { createAgentSessionFlow, type AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { InvocationLog } from "../invocation-log.ts";
import { ScriptedAgentRunner, type ScriptInput, type ScriptReply, type ScriptedTool } from "../scripted-agent-runner.ts";
import { programModelErrorMessage, programModelText, programToolCrashMessage, programToolErrorMessage, programToolOutput } from "./program-texts.ts";
import { programToolSpecs } from "./program-tools.ts";
import { programToolCalls, type ProgramModelCall, type ProgramToolCall, type SessionProgram } from "./session-program.ts";

/** The Flow type name of every session program's Flow. */
export const sessionProgramFlowType = "SessionProgram";

/** The flow ID of a program's session (each run has an engine of its own). */
export const sessionProgramFlowId = "program-session";

/** Details of one InvocationLog entry; its name is the tool call ID. */
export interface ProgramToolRun {
  toolName: string;
  attempt: number;
  idempotencyKey: string;
}

function modelCallOf(program: SessionProgram, turnId: string, modelCall: number): ProgramModelCall {
  const call = program.turns.find((turn) => turn.turnId === turnId)?.modelCalls.find((candidate) => candidate.modelCall === modelCall);
  if (call === undefined) throw new Error(`session program ${program.seed} has no model call ${modelCall} in ${turnId}`);
  return call;
}

function script(program: SessionProgram): (input: ScriptInput) => ScriptReply {
  return (input) => {
    const planned = modelCallOf(program, input.turnId, input.modelCall);
    const text = programModelText(input.turnId, input.modelCall, input.previousResults);
    if (planned.toolCalls.length === 0) return { text };
    return { text, toolCalls: planned.toolCalls.map((call) => ({ name: call.toolName, arguments: call.arguments })) };
  };
}

/** Runs one planned call: logs the run, then succeeds, refuses or crashes as planned. */
async function runPlannedCall(planned: ProgramToolCall, call: DeferredToolExecution, log: InvocationLog): Promise<string> {
  const run: ProgramToolRun = { toolName: planned.toolName, attempt: call.attempt, idempotencyKey: call.idempotencyKey };
  log.record(planned.toolCallId, run);
  switch (planned.behavior.kind) {
    case "succeed":
      if (call.attempt <= planned.behavior.transientFailures) throw new Error(programToolCrashMessage(planned.toolName));
      return programToolOutput(planned.toolName, planned.toolCallId, planned.arguments.n);
    case "tool-error":
      throw new ToolExecutionError(programToolErrorMessage(planned.toolName, planned.arguments.n));
    case "crash":
      throw new Error(programToolCrashMessage(planned.toolName));
  }
}

function createTools(program: SessionProgram, log: InvocationLog): Record<string, ScriptedTool> {
  const plannedById = new Map(programToolCalls(program).map((call) => [call.toolCallId, call]));
  return Object.fromEntries(programToolSpecs.map((spec) => [spec.name, {
    effect: spec.effect,
    ...(spec.requiresApproval === undefined ? {} : { requiresApproval: spec.requiresApproval }),
    execute: async (_args: Record<string, unknown>, call: DeferredToolExecution): Promise<string> => {
      const planned = plannedById.get(call.toolCall.toolCallId);
      if (planned === undefined || planned.toolName !== spec.name) {
        throw new ToolExecutionError(`session program ${program.seed} has no call ${call.toolCall.toolCallId} of ${spec.name}`);
      }
      return runPlannedCall(planned, call, log);
    },
  } satisfies ScriptedTool]));
}

/** A `ScriptedAgentRunner` whose model calls throw on the attempts the program says. */
class SessionProgramRunner extends ScriptedAgentRunner {
  private readonly program: SessionProgram;

  constructor(program: SessionProgram, log: InvocationLog) {
    super(script(program), createTools(program, log));
    this.program = program;
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const modelCall = turn.frameworkRunState === null ? 1 : (JSON.parse(turn.frameworkRunState) as { model_calls: number }).model_calls + 1;
    const planned = modelCallOf(this.program, turn.turnId, modelCall);
    if (planned.alwaysFails || turn.attempt <= planned.transientFailures) throw new Error(programModelErrorMessage(turn.turnId, modelCall));
    return super.runModelStep(turn);
  }
}

/**
 * The session Flow of `program`, logging tool runs to `invocationLogPath`.
 * The test and every Worker process build it from the same seed.
 *
 * @example
 * const flow = createSessionProgramFlow(generateSessionProgram(7), join(engine.directory, "tool-runs.log"));
 */
export function createSessionProgramFlow(program: SessionProgram, invocationLogPath: string): AgentSessionFlow {
  return createAgentSessionFlow(new SessionProgramRunner(program, new InvocationLog(invocationLogPath)), sessionProgramFlowType);
}
