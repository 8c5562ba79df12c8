/**
 * `perdure chat` in the terminal, driven through its input and output
 * streams against a real Worker on a temporary SQLite file: a question
 * answered by number after a refused pick, a plan-mode message whose draft
 * the terminal offers to execute, and the executing turn it starts.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createStepwiseAgentSessionFlow, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { runChatCommand } from "./chat.ts";

function modelCallsInTurn(request: ModelRequest): number {
  const lastUser = request.input.map((item) => item.type).lastIndexOf("user_text");
  return request.input.slice(lastUser + 1).filter((item) => item.type === "model_output").length;
}

/** Asks which size for an exchange, drafts a two-task plan in plan mode, and completes it once approved. */
function reply(request: ModelRequest): ScriptedModelReply {
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const results = ScriptedModelClient.toolResults(request);
  const step = modelCallsInTurn(request);
  const todos = (status: "pending" | "completed") => [{ content: "Look up order 7", status }, { content: "Refund order 7", status }];
  if (request.tools.length > 0 && request.tools.every((tool) => tool.name === "write_todos")) {
    return step === 0 ? { toolCalls: [{ name: "write_todos", arguments: { todos: todos("pending") } }] } : { text: "Plan ready." };
  }
  if (userText.startsWith("[Perdure] The user approved plan revision 1.")) {
    return step === 0 ? { toolCalls: [{ name: "write_todos", arguments: { todos: todos("completed") } }] } : { text: "All done." };
  }
  const asked = results.find((result) => result.toolName === "ask_user");
  if (asked !== undefined) return { text: `Got ${asked.output}` };
  return { text: "Which one?", toolCalls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M"], allows_free_text: false } }] };
}

void test("perdure chat answers a question by number after a refused pick, and executes a drafted plan when asked", { timeout: 300_000 }, async (t) => {
  const temporary = createTemporarySqliteStore();
  const flow = createStepwiseAgentSessionFlow(
    { name: "chat-test", instructions: "", model: new ScriptedModelClient(reply), builtInTools: ["ask_user", "write_todos"], planModeEnabled: true },
    "ChatTestAgent",
  );
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk: Buffer) => { printed += chunk.toString(); });
  input.end(["exchange order 7", "3", "2", "/plan refund order 7", "y", "/quit", ""].join("\n"));

  await runChatCommand(client, flow, "c1", input, output);

  assert.match(printed, /started session c1/);
  assert.match(printed, /\[the agent asks\] Which size\?\n {4}1\. S\n {4}2\. M\n/);
  assert.match(printed, /answer \(a number, \/decline \[why\]\)> {3}pick one of 1 to 2\n/, "a pick outside the choices is refused and asked again");
  assert.match(printed, /\[answered: M\]/);
  assert.match(printed, /Got \{"status":"answered","answer":"M"\}/);
  assert.match(printed, /\[plan revision 1, draft\]\n {4}\[ \] Look up order 7\n {4}\[ \] Refund order 7/);
  assert.match(printed, /Plan ready\.\nexecute plan revision 1\? \[y\/N\] /);
  assert.match(printed, /\[plan revision 1, active(\]|, 2 tasks\])/, "the approval marks the draft active");
  assert.match(printed, /\[plan revision 2, completed\]\n {4}\[x\] Look up order 7\n {4}\[x\] Refund order 7/);
  assert.match(printed, /All done\./);
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, "c1");
  assert.equal(snapshot.state?.turnCount, 3, "the question's turn, the planning turn and the executing turn");
  assert.deepEqual([snapshot.plan?.revision, snapshot.plan?.status], [2, "completed"]);
  assert.equal(snapshot.messages.at(-1)?.text, "All done.");
});
