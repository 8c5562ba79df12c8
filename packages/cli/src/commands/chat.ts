import { createInterface } from "node:readline/promises";
import { personLockConflictRetryMs, type AgentPlan, type AgentSessionFlow } from "@perdure/agents";
import { ChannelMessageNotFoundError, FlowNotFoundError, type Client } from "@perdure/engine";

/**
 * For the RPCs that lock `PendingInterrupts`, `PendingPlanExecution` or
 * `TurnCancellationRequest`: called again while a Step holds the lock, and
 * given up with the `RpcLockConflictError` after `personLockConflictRetryMs`.
 */
const forPerson = { lockConflictRetryMs: personLockConflictRetryMs };

type Ask = (prompt: string) => Promise<string | undefined>;

/** The lines that ask and answer one question: a choice by number or text, free text when allowed, or `/decline [message]`. */
async function answerQuestion(client: Client, flow: AgentSessionFlow, sessionId: string, payload: Record<string, unknown>, ask: Ask, output: NodeJS.WritableStream): Promise<void> {
  const interruptId = String(payload.interrupt_id);
  const choices = Array.isArray(payload.choices) ? payload.choices.filter((choice): choice is string => typeof choice === "string") : [];
  const allowsFreeText = typeof payload.allows_free_text === "boolean" ? payload.allows_free_text : choices.length === 0;
  const asker = payload.tool_name === "ask_user" ? "the agent asks" : `${String(payload.tool_name)} asks`;
  output.write(`\n  [${asker}] ${String(payload.question)}\n`);
  choices.forEach((choice, index) => output.write(`    ${index + 1}. ${choice}\n`));
  const hint = [choices.length > 0 ? "a number" : "", allowsFreeText ? "your answer" : "", "/decline [why]"].filter((part) => part !== "").join(", ");
  for (;;) {
    const line = (await ask(`  answer (${hint})> `))?.trim();
    if (line === undefined || line.startsWith("/decline")) {
      const reason = line?.slice("/decline".length).trim() ?? "";
      await client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId, approved: false, rejectionMessage: reason === "" ? null : reason }, forPerson);
      output.write("  [declined]\n  ");
      return;
    }
    const picked = /^\d+$/.test(line) ? choices[Number(line) - 1] : undefined;
    const answer = picked ?? line;
    if (await client.invokeRPC(flow.answerQuestion, sessionId, { interruptId, answer }, forPerson)) {
      output.write(`  [answered: ${answer}]\n  `);
      return;
    }
    const [pending] = await client.getAttributes(sessionId, flow.pendingInterrupts);
    if (!(pending ?? []).some((interrupt) => interrupt.interruptId === interruptId)) {
      output.write("  [the question is no longer pending]\n  ");
      return;
    }
    output.write(choices.length > 0 && !allowsFreeText ? `  pick one of 1 to ${choices.length}\n` : "  the answer is blank\n");
  }
}

const taskMarks = { pending: "[ ]", in_progress: "[~]", completed: "[x]" } as const;

/** The plan as lines: its revision and status, then each task with its mark. */
function formatPlan(plan: AgentPlan): string {
  const tasks = plan.tasks.map((task) => `    ${taskMarks[task.status]} ${task.content}`);
  return [`\n  [plan revision ${plan.revision}, ${plan.status}]`, ...tasks].join("\n") + "\n  ";
}

/** Events reach the Stream before their commit: how long to wait for the plan a `plan_updated` event announces. */
const planCommitWaitMs = 3000;

/** The committed plan once it has the event's revision and status, or undefined when none commits within the wait. */
async function readCommittedPlan(client: Client, flow: AgentSessionFlow, sessionId: string, payload: Record<string, unknown>): Promise<AgentPlan | undefined> {
  const deadline = Date.now() + planCommitWaitMs;
  for (;;) {
    const [plan] = await client.getAttributes(sessionId, flow.agentPlan);
    if (plan !== undefined && plan.revision === payload.revision && plan.status === payload.status) return plan;
    if (plan !== undefined && typeof payload.revision === "number" && plan.revision > payload.revision) return undefined;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Prints one event of the followed turn; answers its approvals and questions. */
async function showEvent(client: Client, flow: AgentSessionFlow, sessionId: string, type: string, payload: Record<string, unknown>, ask: Ask, output: NodeJS.WritableStream): Promise<void> {
  switch (type) {
    case "text_delta":
      output.write(String(payload.text));
      return;
    case "tool_call_started":
      output.write(`\n  [${String(payload.tool_name)} running]\n  `);
      return;
    case "tool_call_finished":
      output.write(`\n  [${String(payload.tool_name)} ${String(payload.status)}]\n  `);
      return;
    case "timer_started":
      output.write(`\n  [waiting durably until ${String(payload.wait_until)}: ${String(payload.reason)}]\n  `);
      return;
    case "plan_updated": {
      const plan = await readCommittedPlan(client, flow, sessionId, payload);
      output.write(plan === undefined ? `\n  [plan revision ${String(payload.revision)}, ${String(payload.status)}, ${String(payload.task_count)} tasks]\n  ` : formatPlan(plan));
      return;
    }
    case "interrupt_raised":
      if (payload.kind === "question") {
        await answerQuestion(client, flow, sessionId, payload, ask, output);
        return;
      }
      {
        const answer = (await ask(`\n  approve ${String(payload.tool_name)}? [y/N] `))?.trim().toLowerCase();
        const approved = answer === "y" || answer === "yes";
        await client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId: String(payload.interrupt_id), approved, ...(approved ? {} : { rejectionMessage: "rejected in perdure chat" }) }, forPerson);
      }
      return;
    case "tool_task_started":
      output.write(`\n  [${String(payload.tool_name)} started task ${String(payload.task_id)}; the session polls it]\n  `);
      return;
    case "turn_failed":
      output.write(`\n  [turn failed: ${String(payload.error)}]`);
      return;
    case "turn_steered":
      output.write(`\n  [turn steered: ${String(payload.steered_message_count)} message(s) take over in the next turn]\n  `);
      return;
    case "turn_cancelled":
      output.write("\n  [turn stopped]\n  ");
      return;
  }
}

const turnCommandPattern = /^\/(stop|queue|steer|delete)(\s|$)/;

/** Whether a line typed while a turn runs is a turn command (see {@link runChatCommand}). */
function isTurnCommand(line: string): boolean {
  return turnCommandPattern.test(line.trim());
}

/** Runs a turn command typed while a turn runs. */
async function runTurnCommand(client: Client, flow: AgentSessionFlow, sessionId: string, line: string, output: NodeJS.WritableStream): Promise<void> {
  const trimmed = line.trim();
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, sessionId);
  const queued = snapshot.queuedMessages;
  /** The queued message a `#<n>` argument names (1 is the oldest), or undefined. */
  const pick = (argument: string) => (/^#\d+$/.test(argument) ? queued[Number(argument.slice(1)) - 1] : undefined);
  if (trimmed === "/stop") {
    const cancelled = await client.invokeRPC(flow.cancelTurn, sessionId, { turnId: snapshot.state?.activeTurnId ?? null }, forPerson);
    output.write(cancelled ? "\n  [stopping the turn]\n  " : "\n  [no turn to stop]\n  ");
    return;
  }
  if (trimmed.startsWith("/queue ")) {
    const text = trimmed.slice("/queue ".length);
    const sent = await client.invokeRPC(flow.sendUserMessage, sessionId, { text });
    output.write(sent ? `\n  [queued: ${text}]\n  ` : "\n  [the session refused that message]\n  ");
    return;
  }
  if (trimmed === "/queue") {
    output.write(queued.length === 0 ? "\n  [nothing queued]\n  " : `\n${queued.map((message, index) => `  #${index + 1} ${message.text}`).join("\n")}\n  `);
    return;
  }
  if (trimmed.startsWith("/delete ")) {
    const message = pick(trimmed.slice("/delete ".length).trim());
    const deleted = message !== undefined && (await client.invokeRPC(flow.deleteQueuedMessage, sessionId, { messageId: message.messageId }));
    output.write(deleted ? `\n  [deleted: ${message.text}]\n  ` : "\n  [no such queued message; /queue lists them]\n  ");
    return;
  }
  if (trimmed.startsWith("/steer ")) {
    const argument = trimmed.slice("/steer ".length).trim();
    const message = pick(argument);
    if (/^#\d+$/.test(argument) && message === undefined) {
      output.write("\n  [no such queued message; /queue lists them]\n  ");
      return;
    }
    let steered: boolean;
    try {
      steered = await client.invokeRPC(flow.steerUserMessage, sessionId, message === undefined ? { messageId: null, text: argument } : { messageId: message.messageId, text: null });
    } catch (error) {
      if (!ChannelMessageNotFoundError.isInstance(error)) throw error;
      steered = false;
    }
    output.write(steered ? `\n  [sent into the turn: ${message?.text ?? argument}]\n  ` : "\n  [the session did not take it: the message is no longer queued, or the turn cannot be steered]\n  ");
    return;
  }
  output.write("\n  [turn commands: /stop, /queue [text], /steer #<n> or /steer <text>, /delete #<n>]\n  ");
}

/**
 * A terminal chat with one session: streams the agent's text, shows tool
 * calls, tool tasks, durable waits and the plan, asks you to approve or
 * reject each approval and to answer each question, and offers to execute a
 * drafted plan. `/plan <text>` sends a plan-mode message; `/quit` ends.
 * While a turn runs, a line queues a message for the next turn, `/queue`
 * lists the queued ones, `/steer #<n>` sends queued message n into the
 * running turn now and `/steer <text>` sends new text, `/delete #<n>`
 * deletes one, and `/stop` stops the turn. A Worker for the session must run
 * (`perdure dev`, or the one `perdure chat` starts).
 */
export async function runChatCommand(client: Client, flow: AgentSessionFlow, sessionId: string, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<void> {
  try {
    await client.describe(sessionId);
  } catch (error) {
    if (!FlowNotFoundError.isInstance(error)) throw error;
    await client.start(flow, sessionId, {});
    output.write(`started session ${sessionId}\n`);
  }
  const terminal = createInterface({ input, output, terminal: false });
  const lines = terminal[Symbol.asyncIterator]();
  /** The next line, read once: a turn command while a turn runs and an answer to a prompt share it. */
  let nextLine: Promise<IteratorResult<string>> | null = null;
  let readyLine: IteratorResult<string> | null = null;
  const takeLine = async (): Promise<string | undefined> => {
    nextLine ??= lines.next().then((result) => (readyLine = result));
    const result = await nextLine;
    nextLine = null;
    readyLine = null;
    return result.done === true ? undefined : result.value;
  };
  /** A line typed while the turn ran, without waiting for one or taking it. */
  const peekTypedLine = (): IteratorResult<string> | null => {
    nextLine ??= lines.next().then((result) => (readyLine = result));
    return readyLine;
  };
  const ask: Ask = async (prompt) => {
    output.write(prompt);
    return takeLine();
  };
  let after = (await client.listStreamMessages(sessionId, flow.agentEvents, { limit: 1 })).at(-1)?.token;
  /** Follows the turns the session starts until at least `minimumTurns` ran and none is active or queued. */
  const follow = async (minimumTurns: number): Promise<void> => {
    output.write("agent> ");
    for (;;) {
      const read = await client.readStream(sessionId, flow.agentEvents, { waitMs: 300, ...(after === undefined ? {} : { after }) });
      after = read.nextToken;
      for (const { value: event } of read.messages) await showEvent(client, flow, sessionId, event.type, event.payload, ask, output);
      // Turn commands run at once; any other line waits for the next prompt, as before.
      const typed = peekTypedLine();
      if (typed !== null && typed.done !== true && isTurnCommand(typed.value)) await runTurnCommand(client, flow, sessionId, (await takeLine()) ?? "", output);
      const [state] = await client.getAttributes(sessionId, flow.agentState);
      if (state === undefined || state.turnCount < minimumTurns || state.activeTurnId !== null || read.messages.length > 0) continue;
      const snapshot = await client.invokeRPC(flow.getAgentSnapshot, sessionId);
      if (snapshot.queuedMessages.length === 0 && snapshot.steeredMessages.length === 0) break;
    }
    output.write("\n");
  };
  for (;;) {
    const line = await ask("you> ");
    if (line === undefined || line.trim() === "/quit") break;
    const planMode = line.trim().startsWith("/plan ");
    const text = planMode ? line.trim().slice("/plan ".length) : line;
    if (text.trim() === "") continue;
    const [before] = await client.getAttributes(sessionId, flow.agentState);
    if (!(await client.invokeRPC(flow.sendUserMessage, sessionId, { text, ...(planMode ? { planMode } : {}) }))) {
      output.write(planMode ? "(the session refused that message: its agent does not enable plan mode)\n" : "(the session refused that message)\n");
      continue;
    }
    let targetTurns = (before?.turnCount ?? 0) + 1 + (before?.activeTurnId === null ? 0 : 1);
    await follow(targetTurns);
    // A drafted plan waits for approval; executing it starts the next turn.
    for (;;) {
      const [plan] = await client.getAttributes(sessionId, flow.agentPlan);
      if (plan?.status !== "draft") break;
      const answer = (await ask(`execute plan revision ${plan.revision}? [y/N] `))?.trim().toLowerCase();
      if (answer !== "y" && answer !== "yes") break;
      if (!(await client.invokeRPC(flow.executePlan, sessionId, { revision: plan.revision }, forPerson))) {
        output.write("(the session did not take the approval: the plan changed or the session is busy)\n");
        break;
      }
      const [executing] = await client.getAttributes(sessionId, flow.agentState);
      targetTurns = Math.max(targetTurns, executing?.turnCount ?? 0) + 1;
      await follow(targetTurns);
    }
  }
  terminal.close();
}
