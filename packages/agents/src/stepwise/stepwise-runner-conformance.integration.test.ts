/** Stepwise passes the same runner conformance tests every framework adapter runs. */
import { runRunnerConformanceTests } from "../testing/runner-conformance/run-runner-conformance.ts";
import { stepwiseConformanceSubject } from "./test-fixtures/stepwise-conformance-subject.ts";

runRunnerConformanceTests(stepwiseConformanceSubject);
