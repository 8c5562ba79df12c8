/** Entry module of the Worker child processes of the OpenAI Agents SDK adapter's conformance tests. */
import { runRunnerConformanceWorker } from "@perdure/agents/testing";
import { openAiAgentsConformanceSubject } from "./openai-agents-conformance-subject.ts";

await runRunnerConformanceWorker(openAiAgentsConformanceSubject);
