/** Entry module of the Worker child processes of Stepwise's runner conformance tests. */
import { runRunnerConformanceWorker } from "../../testing/runner-conformance/run-runner-conformance-worker.ts";
import { stepwiseConformanceSubject } from "./stepwise-conformance-subject.ts";

await runRunnerConformanceWorker(stepwiseConformanceSubject);
