/**
 * `agentTool`: another agent session Flow as a tool. The parent's tool Step
 * starts the child session idempotently (its ID derived from the call's
 * idempotency key) and returns a tool task, so the parent waits on a Timer
 * without holding a Worker; when the child's turn ends, the child's
 * `NotifyParentSession` Step fires that Timer and the parent's poll reads
 * the child's final answer (or its failure) as the tool's result.
 * Cancelling the parent's turn abandons the task, which cancels the child's
 * turn.
 */
import { createHash } from "node:crypto";
import { FlowAlreadyExistsError, InvalidInputError, type Client } from "@perdure/engine";
import type { ToolInputRequested, ToolTaskCancellation, ToolTaskPoll, ToolTaskPollOutcome } from "../contract/agent-framework-runner.ts";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import type { QuestionAnswer } from "../contract/values/agent-tool-call.ts";
import { personLockConflictRetryMs } from "../session/rpcs/person-lock-conflict-retry.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { registerSubAgentClient, type ParentSessionLink } from "../session/sub-agents/parent-session.ts";
import { functionTool, type FunctionTool, type ToolCallContext } from "./function-tool.ts";
import type { JsonSchema } from "./model-client.ts";

/** What {@link agentTool} takes. */
export interface AgentToolOptions {
  /** The child agent's session Flow; a Worker that runs the parent must run it too. */
  flow: AgentSessionFlow;
  /** The tool's name, as the model sees it. */
  name: string;
  /** What the sub-agent does, for the model. */
  description: string;
  /** The Client that starts and reads child sessions (a Worker has none of its own). */
  client: Client;
  /**
   * The arguments' JSON Schema and how they become the child's first
   * message. @default `{ task: string }`, sent as the message
   */
  input?: { parameters: JsonSchema; toMessage: (argumentsValue: Record<string, unknown>) => string };
  /** The deepest nesting of sub-agents: a child at a deeper level is refused. @default 3 */
  maxDepth?: number;
  /**
   * Seconds between the parent's safety polls of a child that has not
   * finished; the child's turn end wakes the parent at once. @default 30
   */
  safetyPollSeconds?: number;
}

/** The choices of a child's approval asked in the parent. */
const approveChoice = "Approve";
const rejectChoice = "Reject";

const defaultInput = {
  parameters: { type: "object", properties: { task: { type: "string", description: "What the sub-agent should do, in full: it sees nothing else of this conversation." } }, required: ["task"], additionalProperties: false } as JsonSchema,
  toMessage: (argumentsValue: Record<string, unknown>) => (typeof argumentsValue["task"] === "string" ? argumentsValue["task"] : ""),
};

/**
 * The child session's ID for one tool call: `<parent ID>.<tool>-<hash of
 * the idempotency key>`, the same on every attempt, within 128 characters.
 */
export function childSessionId(parentSessionId: string, toolName: string, idempotencyKey: string): string {
  const hash = createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 20);
  return `${parentSessionId.slice(0, 128 - toolName.length - 22)}.${toolName}-${hash}`;
}

/**
 * Makes another agent session Flow a tool of a Stepwise agent.
 *
 * @example
 * const research = agentTool({ flow: researcherFlow, name: "research", description: "Researches a question and answers with sources.", client });
 * const writer = createStepwiseAgentSessionFlow({ model, instructions: "...", tools: [research] }, "Writer");
 */
export function agentTool(options: AgentToolOptions): FunctionTool<Record<string, unknown>> {
  const { flow, client, name } = options;
  const maxDepth = options.maxDepth ?? 3;
  const safetyPollSeconds = options.safetyPollSeconds ?? 30;
  if (!Number.isInteger(maxDepth) || maxDepth < 1) throw new InvalidInputError(`agentTool ${name}: maxDepth ${String(maxDepth)} is invalid; use a whole number of at least 1`);
  if (typeof flow?.flowType !== "string" || flow.parentSession === undefined) throw new InvalidInputError(`agentTool ${name}: flow is not an agent session Flow; pass what createAgentSessionFlow or createStepwiseAgentSessionFlow returned`);
  const input = options.input ?? defaultInput;
  registerSubAgentClient(flow.flowType, client);

  const start = async (argumentsValue: Record<string, unknown>, call: ToolCallContext) => {
    const [parentLink] = await client.getAttributes(call.flowId, flow.parentSession);
    const depth = (parentLink?.depth ?? 0) + 1;
    if (depth > maxDepth) throw new ToolExecutionError(`agentTool ${name}: a sub-agent at depth ${depth} is over maxDepth ${maxDepth}; answer without it`);
    const message = input.toMessage(argumentsValue);
    if (message.trim() === "") throw new ToolExecutionError(`agentTool ${name}: the message for the sub-agent is blank`);
    const childId = childSessionId(call.flowId, name, call.idempotencyKey);
    const link: ParentSessionLink = { sessionId: call.flowId, toolCallId: call.toolCallId, depth };
    try {
      await client.start(flow, childId, { initial_message: message }, { requestId: call.idempotencyKey, attributes: [{ ref: flow.parentSession, value: link }] });
    } catch (error) {
      // Started by an earlier attempt of this call: the same child.
      if (!FlowAlreadyExistsError.isInstance(error)) throw error;
    }
    // A child that finished already (this is a retry after a crash) is read at the first poll, a second on.
    const [state] = await client.getAttributes(childId, flow.agentState);
    const finished = state !== undefined && state.turnCount >= 1 && state.activeTurnId === null;
    return { kind: "tool_task_started" as const, taskId: childId, pollIntervalSeconds: finished ? 1 : safetyPollSeconds };
  };

  const poll = async (request: ToolTaskPoll): Promise<ToolTaskPollOutcome> => {
    const childId = request.toolCall.taskId ?? "";
    if (request.pendingAnswer !== null) await forwardAnswer(childId, request.toolCall.inputContinuation, request.pendingAnswer);
    const [state, pending] = await client.getAttributes(childId, flow.agentState, flow.pendingInterrupts);
    if (state === undefined || state.turnCount < 1 || state.activeTurnId !== null) {
      // The child waits for a person: ask in the parent's stream, and forward the answer on the next poll.
      const interrupt = (pending ?? []).find((candidate) => candidate.turnId === state?.activeTurnId);
      if (interrupt !== undefined) return askInParent(childId, interrupt);
      return { kind: "tool_task_pending", pollIntervalSeconds: safetyPollSeconds };
    }
    if (state.lastTurnError !== null) throw new ToolExecutionError(`sub-agent ${name} (session ${childId}) failed: ${state.lastTurnError}`);
    const snapshot = await client.invokeRPC(flow.getAgentSnapshot, childId, undefined);
    const answer = snapshot.messages.filter((message) => message.role === "assistant" && message.text.trim() !== "").at(-1);
    if (answer === undefined) throw new ToolExecutionError(`sub-agent ${name} (session ${childId}) ended its turn without an answer`);
    // The child's model usage rolls up into the parent's.
    return { output: answer.text, usage: snapshot.usage };
  };

  const askInParent = (childId: string, interrupt: AgentInterrupt): ToolInputRequested => {
    const continuation = JSON.stringify({ child_interrupt_id: interrupt.interruptId, kind: interrupt.kind });
    if (interrupt.kind === "approval") {
      return {
        kind: "tool_input_requested", continuation, choices: [approveChoice, rejectChoice], allowsFreeText: false,
        question: `Sub-agent ${name} (session ${childId}) asks for approval to run ${interrupt.toolName} with ${interrupt.arguments}.`,
      };
    }
    return {
      kind: "tool_input_requested", continuation, choices: interrupt.choices ?? null, allowsFreeText: interrupt.allowsFreeText ?? true,
      question: `Sub-agent ${name} (session ${childId}) asks: ${interrupt.question ?? ""}`,
    };
  };

  const forwardAnswer = async (childId: string, continuationText: string | undefined, answer: QuestionAnswer): Promise<void> => {
    let forwarded: { child_interrupt_id?: unknown; kind?: unknown };
    try {
      forwarded = JSON.parse(continuationText ?? "") as typeof forwarded;
    } catch {
      return;
    }
    const interruptId = typeof forwarded.child_interrupt_id === "string" ? forwarded.child_interrupt_id : "";
    if (interruptId === "") return;
    const options = { lockConflictRetryMs: personLockConflictRetryMs };
    if (forwarded.kind === "approval") {
      const approved = answer.resolution === "answered" && answer.answer === approveChoice;
      await client.invokeRPC(flow.resolveInterrupt, childId, { interruptId, approved, rejectionMessage: approved ? null : `rejected in the parent session (${answer.resolution})` }, options);
    } else if (answer.resolution === "answered" && answer.answer !== null) {
      await client.invokeRPC(flow.answerQuestion, childId, { interruptId, answer: answer.answer }, options);
    } else {
      await client.invokeRPC(flow.resolveInterrupt, childId, { interruptId, approved: false, rejectionMessage: `declined in the parent session (${answer.resolution})` }, options);
    }
  };

  const cancel = async (cancellation: ToolTaskCancellation): Promise<void> => {
    const childId = cancellation.toolCall.taskId;
    if (childId === undefined || childId === null) return;
    await client.invokeRPC(flow.cancelTurn, childId, {});
  };

  const tool = functionTool<Record<string, unknown>>({
    name,
    description: options.description,
    parameters: input.parameters,
    effect: "idempotent_write",
    requiresApproval: false,
    execute: start,
    pollTask: poll,
    cancelTask: cancel,
  });
  // Marked, so the session counts each call toward maxSubAgentsPerTurn before any runs.
  return Object.freeze({ ...tool, startsSubAgent: true });
}
