/** The end of a test that started Worker children: kill them all, then say what they printed. */
import type { TestContext } from "node:test";
import type { KillableWorkerProcess } from "../killable-worker-process.ts";
import { agentWorkerReadyLine } from "../worker-process-protocol.ts";

/** SIGKILLs every process in `workerProcesses`, then reports each one's output besides its ready line as a diagnostic of `t`. */
export async function killAndReportWorkerProcesses(t: TestContext, workerProcesses: readonly KillableWorkerProcess[]): Promise<void> {
  for (const workerProcess of workerProcesses) await workerProcess.kill();
  for (const workerProcess of workerProcesses) {
    const extraOutput = workerProcess.output().split("\n").filter((line) => line !== "" && !line.startsWith(agentWorkerReadyLine));
    if (extraOutput.length > 0) t.diagnostic(`Worker process ${workerProcess.pid} printed:\n${extraOutput.join("\n")}`);
  }
}
