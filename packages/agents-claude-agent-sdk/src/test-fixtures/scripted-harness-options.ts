/**
 * The SDK options of a test: the harness pointed at a loopback fake of the
 * Messages API that answers from a script, with a fake key, no settings
 * files and no traffic besides the model calls.
 */
import type { Options } from "@anthropic-ai/claude-agent-sdk";
import type { ConformanceModel } from "@perdure/agents/testing";
import { startFakeMessagesApi, type FakeMessagesApi, type FakeMessagesScript } from "../testing/fake-messages-api.ts";
import { readFakeRequest } from "../testing/read-fake-request.ts";

/** The harness's environment for a fake at `url`. */
export function fakeApiEnvironment(url: string): Record<string, string> {
  return { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-perdure-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" };
}

/** Options that start the fake on first use; `api` resolves to it. */
export function scriptedHarnessOptions(script: FakeMessagesScript): { queryOptions: () => Promise<Options>; api: Promise<FakeMessagesApi> } {
  const api = startFakeMessagesApi(script);
  return { api, queryOptions: async () => ({ model: "claude-fake-1", env: fakeApiEnvironment((await api).url) }) };
}

/** The neutral conformance model as a script of the fake. */
export function conformanceScript(model: ConformanceModel): FakeMessagesScript {
  return async (request, signal) => {
    const facts = readFakeRequest(request);
    const reply = await model.reply({ lastUserText: facts.lastUserText, turnToolResults: facts.turnToolResults, signal });
    if (reply.kind === "text") return { kind: "text", text: reply.text };
    return { kind: "tool_use", id: `toolu_u${facts.userTextMessages}_m${facts.modelCallInTurn}`, name: `mcp__perdure__${reply.toolName}`, input: reply.arguments };
  };
}
