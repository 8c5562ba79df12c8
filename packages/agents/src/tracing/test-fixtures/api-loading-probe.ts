/**
 * Child process of the API loading test. Records every `@opentelemetry/*`
 * module Node resolves, runs one session turn on a temporary SQLite store
 * with the tracing mode named in argv[2], and prints what it saw as JSON on a `probe result: ` line:
 * `disabled` (`isEnabled: false`), `enabled` (the default), `absent` (the
 * default, with `@opentelemetry/api` made unresolvable), `root-only` (only
 * imports the root entry).
 */
import { registerHooks } from "node:module";

/** The prefix of the line that carries the result. */
const probeResultPrefix = "probe result: ";
const mode = process.argv[2];
const resolvedSpecifiers: string[] = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith("@opentelemetry/")) {
      resolvedSpecifiers.push(specifier);
      if (mode === "absent") throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: "ERR_MODULE_NOT_FOUND" });
    }
    return nextResolve(specifier, context);
  },
});

const agents = await import("@perdure/agents");
let turnError: string | null = null;
let messageTexts: string[] = [];
if (mode !== "root-only") {
  const { Client, Worker } = await import("@perdure/engine");
  const { createTemporarySqliteStore, pollUntil } = await import("@perdure/engine/testing");
  const { ScriptedAgentRunner } = await import("@perdure/agents/testing");
  const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
    ? { toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }] }
    : { text: "Answer: shipped" }, { lookup_order: { effect: "read", execute: async () => "shipped" } });
  const flow = agents.createAgentSessionFlow(runner, "Probe", mode === "disabled" ? { tracing: { isEnabled: false } } : {});
  const temporary = createTemporarySqliteStore();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const client = new Client({ store: temporary.store });
  await client.start(flow, "s1", { initial_message: "Where is order 7?" });
  const state = await pollUntil(async () => {
    const [current] = await client.getAttributes("s1", flow.agentState);
    return current?.turnCount === 1 && current.activeTurnId === null ? current : undefined;
  }, { timeoutMs: 15_000, description: "the probe turn" });
  turnError = state.lastTurnError;
  messageTexts = (await client.invokeRPC(flow.getAgentSnapshot, "s1")).messages.map((message) => message.text);
  await worker.close();
  await temporary.dispose();
}
process.stdout.write(`\n${probeResultPrefix}${JSON.stringify({ resolvedSpecifiers: [...new Set(resolvedSpecifiers)], turnError, messageTexts })}\n`);
