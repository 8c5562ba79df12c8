/** Entry module of the Worker child processes of the AI SDK adapter's conformance tests. */
import { runRunnerConformanceWorker } from "@perdure/agents/testing";
import { vercelAiConformanceSubject } from "./vercel-ai-conformance-subject.ts";

await runRunnerConformanceWorker(vercelAiConformanceSubject);
