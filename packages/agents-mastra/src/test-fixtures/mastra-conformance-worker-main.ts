/** Entry module of the Worker child processes of the Mastra adapter's conformance tests. */
import { runRunnerConformanceWorker } from "@perdure/agents/testing";
import { mastraConformanceSubject } from "./mastra-conformance-subject.ts";

await runRunnerConformanceWorker(mastraConformanceSubject);
