/** The Mastra adapter passes the runner conformance tests Stepwise passes. */
import { runRunnerConformanceTests } from "@perdure/agents/testing";
import { mastraConformanceSubject } from "./test-fixtures/mastra-conformance-subject.ts";

runRunnerConformanceTests(mastraConformanceSubject);
