/**
 * Restate (`@restatedev/restate-server` and `@restatedev/restate-sdk`) as an
 * {@link AgentTurnSystem}, written as Restate's agent examples write one: a
 * Virtual Object per session whose `turn` handler reads the session's
 * history from the object's state, runs the loop with every model call and
 * every tool call a `ctx.run`, and stores the history back. The server is
 * the npm package's binary, which the bench starts on loopback with its data
 * in a temporary folder (its default configuration: RocksDB and its own
 * log, with fsync); the SDK endpoint is an HTTP/2 server in this process.
 */
import * as restate from "@restatedev/restate-sdk";
import * as clients from "@restatedev/restate-sdk-clients";
import { startRestate } from "../peers/restate-system.ts";
import { modelLatency, readToolName, runReadTool, runWriteTool, scriptedModelReply, type ScriptedModelReply } from "./scripted-turn.ts";
import { directoryBytes } from "./store-bytes.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

interface TurnMessage {
  role: "user" | "assistant" | "tool";
  text: string;
}

const agentSession = restate.object({
  name: "PerdureBenchAgentSession",
  handlers: {
    turn: async (context: restate.ObjectContext, request: { orderId: string; text: string }): Promise<string> => {
      const messages = (await context.get<TurnMessage[]>("messages")) ?? [];
      messages.push({ role: "user", text: request.text });
      for (let modelCall = 1; ; modelCall++) {
        const reply = await context.run(`model-${modelCall}`, async (): Promise<ScriptedModelReply> => {
          await modelLatency();
          return scriptedModelReply(modelCall, request.orderId);
        });
        if ("text" in reply) {
          messages.push({ role: "assistant", text: reply.text });
          context.set("messages", messages);
          return reply.text;
        }
        const { name, arguments: argumentsValue } = reply.toolCall;
        const output = await context.run(`tool-${modelCall}-${name}`, () => Promise.resolve(name === readToolName ? runReadTool(argumentsValue) : runWriteTool(argumentsValue)));
        messages.push({ role: "tool", text: output });
      }
    },
  },
});

/** Starts a Restate server, registers the agent's Virtual Object, and returns the system. */
export async function openRestateAgent(): Promise<AgentTurnSystem> {
  const running = await startRestate([agentSession]);
  const ingress = clients.connect({ url: running.ingressUrl });
  return {
    name: `Restate ${running.version.split(".").slice(0, 2).join(".")} (its own log)`,
    startSession: () => Promise.resolve(),
    async runTurn(sessionId, turnNumber) {
      const answer = await ingress.objectClient(agentSession, sessionId).turn(
        { orderId: `${sessionId}-${turnNumber}`, text: `Where is order ${turnNumber}?` },
        clients.rpc.opts({ idempotencyKey: `${sessionId}-turn-${turnNumber}` }),
      );
      if (!answer.startsWith("Order ")) throw new Error(`Restate turn ${sessionId}/${turnNumber} answered ${answer}`);
    },
    bytesStored: () => Promise.resolve(directoryBytes(running.folder)),
    close: () => running.stop(),
  };
}
