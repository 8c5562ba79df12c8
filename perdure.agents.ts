/**
 * The agents `perdure` commands run from the repository root: the example
 * support agent, on the scripted demo model unless a model key is set.
 */
export { supportAgentFlow } from "./examples/support-agent/src/agents.ts";
