/** The AI SDK adapter passes the runner conformance tests Stepwise passes. */
import { runRunnerConformanceTests } from "@perdure/agents/testing";
import { vercelAiConformanceSubject } from "./test-fixtures/vercel-ai-conformance-subject.ts";

runRunnerConformanceTests(vercelAiConformanceSubject);
