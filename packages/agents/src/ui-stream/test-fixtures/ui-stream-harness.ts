/**
 * One UI stream test's world: a session Flow on a temporary SQLite store with
 * an in-process Worker, the routes on a loopback HTTP server, and chats that
 * talk to them.
 */
import type { UIMessage } from "ai";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow, type AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import type { AgentSessionOptions } from "../../session/session-options.ts";
import { startSessionHarness, type SessionHarness } from "../../session/test-fixtures/session-harness.ts";
import { AgentSessionTestClient } from "../../testing/agent-session-test-client.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { readAgentSessionUIMessages } from "../agent-ui-messages.ts";
import type { AgentUIMessage } from "../agent-ui-message-types.ts";
import { StreamingScriptedRunner, type StreamingScriptInput, type StreamingScriptReply, type StreamingScriptedTool } from "./streaming-scripted-runner.ts";
import { TestChat, plain } from "./test-chat.ts";
import { startUIStreamTestServer, type UIStreamTestServer } from "./ui-stream-test-server.ts";

/** The running world of one test. */
export interface UIStreamHarness {
  runner: StreamingScriptedRunner;
  flow: AgentSessionFlow;
  session: SessionHarness;
  sessions: AgentSessionTestClient;
  server: UIStreamTestServer;
  chat(chatId: string, options?: { messages?: UIMessage[]; resumeToken?: string | null; onError?: (error: Error) => void }): TestChat;
  /** The stored messages as UI messages. */
  storedMessages(chatId: string): Promise<AgentUIMessage[]>;
  /** The stored assistant message of a turn, as plain JSON. */
  storedAssistantMessage(chatId: string, turnId: string): Promise<AgentUIMessage>;
  waitForTurnEnd(chatId: string, turnCount: number): Promise<AgentState>;
  /** A gate that `dispose` opens, so no Step stays parked. */
  gate(): PromiseGate;
  dispose(): Promise<void>;
}

let flowNumber = 0;

export async function startUIStreamHarness(
  script: (input: StreamingScriptInput) => StreamingScriptReply,
  tools: Readonly<Record<string, StreamingScriptedTool>> = {},
  options: AgentSessionOptions = {},
): Promise<UIStreamHarness> {
  const runner = new StreamingScriptedRunner(script, tools);
  flowNumber += 1;
  const flow = createAgentSessionFlow(runner, `UIStreamTest${flowNumber}`, options);
  const session = await startSessionHarness([flow]);
  const sessions = new AgentSessionTestClient(session.client, flow);
  const server = await startUIStreamTestServer({ client: session.client, flow });
  const chats: TestChat[] = [];
  const gates: PromiseGate[] = [];
  const harness: UIStreamHarness = {
    runner,
    flow,
    session,
    sessions,
    server,
    chat(chatId, chatOptions = {}) {
      const chat = new TestChat({ baseUrl: server.baseUrl, chatId, ...chatOptions });
      chats.push(chat);
      return chat;
    },
    async storedMessages(chatId) {
      return (await readAgentSessionUIMessages({ client: sessions.client, flow, flowId: chatId })).messages;
    },
    async storedAssistantMessage(chatId, turnId) {
      const message = (await harness.storedMessages(chatId)).find((candidate) => candidate.id === `${turnId}-assistant`);
      if (message === undefined) throw new Error(`session ${chatId} has no stored assistant message of ${turnId}`);
      return plain(message);
    },
    waitForTurnEnd(chatId, turnCount) {
      return sessions.waitForTurnCount(chatId, turnCount);
    },
    gate() {
      const gate = new PromiseGate();
      gates.push(gate);
      return gate;
    },
    async dispose() {
      for (const gate of gates) gate.open();
      for (const chat of chats) await chat.stop().catch(() => undefined);
      await server.close();
      await session.dispose();
    },
  };
  return harness;
}

/** A promise gate a runner hook can wait on. */
export class PromiseGate {
  private release: () => void = () => undefined;
  private readonly opened: Promise<void>;
  private reachedCount = 0;

  constructor() {
    this.opened = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  /** Waits here until `open()`. */
  async pass(): Promise<void> {
    this.reachedCount += 1;
    await this.opened;
  }

  open(): void {
    this.release();
  }

  /** Waits until the gate was reached `count` times. */
  async waitUntilReached(count = 1): Promise<void> {
    await pollUntil(async () => (this.reachedCount >= count ? true : undefined), { timeoutMs: 15_000, intervalMs: 5, description: "the runner to reach the gate" });
  }
}
