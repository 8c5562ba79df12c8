/**
 * An entry module for the `perdure dev` tests of what goes wrong and what
 * waits for a person: a scripted model that
 *
 * - throws on "break the model" (every attempt, so the turn fails);
 * - calls `flaky_lookup`, a read tool that throws a `TypeError`, on "use the
 *   broken tool" (three attempts, then the tool call fails);
 * - calls `send_invoice`, a write that waits for approval, on "send the
 *   invoice";
 * - asks with `ask_user` on "ask me";
 *
 * and otherwise answers "ok: <the user's text>".
 */
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";

const invoiceParameters = { type: "object", properties: { invoice_id: { type: "string" } }, required: ["invoice_id"] };

const flakyLookup = functionTool({
  name: "flaky_lookup",
  description: "Looks something up, and always breaks.",
  parameters: { type: "object", properties: {} },
  effect: "read",
  execute: () => {
    throw new TypeError("flaky_lookup cannot read the order table (test)");
  },
});

const sendInvoice = functionTool<{ invoice_id: string }>({
  name: "send_invoice",
  description: "Sends an invoice.",
  parameters: invoiceParameters,
  effect: "non_idempotent_write",
  execute: ({ invoice_id }) => `sent invoice ${invoice_id}`,
});

function reply(request: ModelRequest): ScriptedModelReply {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
  const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  if (/break the model/i.test(text)) throw new Error("the model provider is down (test)");
  if (/use the broken tool/i.test(text)) return { toolCalls: [{ name: "flaky_lookup", arguments: {} }] };
  if (/send the invoice/i.test(text)) return { text: "I will send it once you approve.", toolCalls: [{ name: "send_invoice", arguments: { invoice_id: "INV-7" } }] };
  if (/ask me/i.test(text)) return { toolCalls: [{ name: "ask_user", arguments: { question: "Which color?", choices: ["red", "blue"], allows_free_text: false } }] };
  return { text: `ok: ${text}` };
}

export const troubledAgent = createStepwiseAgentSessionFlow(
  {
    name: "troubled",
    instructions: "Help, and sometimes fail.",
    model: new ScriptedModelClient(reply, { provider: "perdure-test", description: "the troubled scripted model" }),
    tools: [flakyLookup, sendInvoice],
    builtInTools: ["ask_user"],
  },
  "TroubledAgent",
);
