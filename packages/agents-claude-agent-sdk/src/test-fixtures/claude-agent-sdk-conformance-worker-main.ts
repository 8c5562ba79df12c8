/** Entry module of the Worker child processes of the Claude Agent SDK adapter's conformance tests. */
import { runRunnerConformanceWorker } from "@perdure/agents/testing";
import { claudeAgentSdkConformanceSubject } from "./claude-agent-sdk-conformance-subject.ts";

await runRunnerConformanceWorker(claudeAgentSdkConformanceSubject);
