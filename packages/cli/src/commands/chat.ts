import { createInterface } from "node:readline/promises";
import type { AgentSessionFlow } from "@perdure/agents";
import { FlowNotFoundError, RpcLockConflictError, type Client } from "@perdure/engine";

async function resolveWithRetry(client: Client, flow: AgentSessionFlow, sessionId: string, input: { interruptId: string; approved: boolean; rejectionMessage?: string }): Promise<boolean> {
  for (;;) {
    try {
      return await client.invokeRPC(flow.resolveInterrupt, sessionId, input);
    } catch (error) {
      if (!RpcLockConflictError.isInstance(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * A terminal chat with one session: streams the agent's text, shows tool
 * calls, and asks you to approve or reject each approval. A Worker for the
 * session must run (`perdure dev`, or the one `perdure chat` starts).
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
  const ask = async (prompt: string): Promise<string | undefined> => {
    output.write(prompt);
    const next = await lines.next();
    return next.done === true ? undefined : next.value;
  };
  let after = (await client.listStreamMessages(sessionId, flow.agentEvents, { limit: 1 })).at(-1)?.token;
  for (;;) {
    const text = await ask("you> ");
    if (text === undefined || text.trim() === "/quit") break;
    if (text.trim() === "") continue;
    const [before] = await client.getAttributes(sessionId, flow.agentState);
    if (!(await client.invokeRPC(flow.sendUserMessage, sessionId, { text }))) {
      output.write("(the session refused that message)\n");
      continue;
    }
    const targetTurns = (before?.turnCount ?? 0) + 1 + (before?.activeTurnId === null ? 0 : 1);
    output.write("agent> ");
    for (;;) {
      const read = await client.readStream(sessionId, flow.agentEvents, { waitMs: 300, ...(after === undefined ? {} : { after }) });
      after = read.nextToken;
      for (const { value: event } of read.messages) {
        if (event.type === "text_delta") output.write(String(event.payload.text));
        if (event.type === "tool_call_started") output.write(`\n  [${String(event.payload.tool_name)} running]\n  `);
        if (event.type === "tool_call_finished") output.write(`\n  [${String(event.payload.tool_name)} ${String(event.payload.status)}]\n  `);
        if (event.type === "interrupt_raised") {
          const answer = (await ask(`\n  approve ${String(event.payload.tool_name)}? [y/N] `))?.trim().toLowerCase();
          const approved = answer === "y" || answer === "yes";
          await resolveWithRetry(client, flow, sessionId, { interruptId: String(event.payload.interrupt_id), approved, ...(approved ? {} : { rejectionMessage: "rejected in perdure chat" }) });
        }
        if (event.type === "turn_failed") output.write(`\n  [turn failed: ${String(event.payload.error)}]`);
      }
      const [state] = await client.getAttributes(sessionId, flow.agentState);
      if (state !== undefined && state.turnCount >= targetTurns && state.activeTurnId === null && read.messages.length === 0) break;
    }
    output.write("\n");
  }
  terminal.close();
}
