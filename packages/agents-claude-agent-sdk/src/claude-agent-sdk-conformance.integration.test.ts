/**
 * The Claude Agent SDK adapter passes the runner conformance tests Stepwise
 * passes, with the real Claude Code harness on a loopback fake of the
 * Messages API.
 */
import { runRunnerConformanceTests } from "@perdure/agents/testing";
import { claudeAgentSdkConformanceSubject } from "./test-fixtures/claude-agent-sdk-conformance-subject.ts";

runRunnerConformanceTests(claudeAgentSdkConformanceSubject);
