/** The OpenAI Agents SDK adapter passes the runner conformance tests Stepwise passes. */
import { runRunnerConformanceTests } from "@perdure/agents/testing";
import { openAiAgentsConformanceSubject } from "./test-fixtures/openai-agents-conformance-subject.ts";

runRunnerConformanceTests(openAiAgentsConformanceSubject);
