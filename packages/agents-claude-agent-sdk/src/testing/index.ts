/**
 * `@perdure/agents-claude-agent-sdk/testing`: a loopback fake of the
 * Anthropic Messages API, to run the Claude Code harness in tests and demos
 * without a key or a network.
 *
 * @example
 * import { startFakeMessagesApi } from "@perdure/agents-claude-agent-sdk/testing";
 * const api = await startFakeMessagesApi(async () => ({ kind: "text", text: "Hello." }));
 * const flow = createClaudeAgentSdkSessionFlow(agent, "Demo", { queryOptions: { env: { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "sk-fake" } } });
 */
export { startFakeMessagesApi } from "./fake-messages-api.ts";
export type { FakeMessagesApi, FakeMessagesContentBlock, FakeMessagesReply, FakeMessagesRequest, FakeMessagesScript } from "./fake-messages-api.ts";
export { readFakeRequest } from "./read-fake-request.ts";
export type { FakeRequestFacts } from "./read-fake-request.ts";
