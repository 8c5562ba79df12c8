/**
 * The session Flow of the UI stream crash test, imported by the test process
 * (to drive the session and serve its stream) and by Worker child processes
 * (to run it). The first attempt of the turn's model call streams two
 * deltas, then parks at a FileGate in the folder named by
 * `PERDURE_UI_STREAM_CRASH_DIRECTORY` until its Worker is killed; the next
 * attempt streams the whole answer.
 */
import { createAgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { StreamingScriptedRunner } from "./streaming-scripted-runner.ts";

/** The folder of the gate; the test passes it to every Worker child. */
export const uiStreamCrashDirectoryEnvironmentVariable = "PERDURE_UI_STREAM_CRASH_DIRECTORY";

/** The gate the first model call attempt parks at. */
export const uiStreamCrashGateName = "run-model";

const runner = new StreamingScriptedRunner(
  (input) => ({ text: input.attempt === 1 ? ["Partial ", "draft ", "never finished"] : ["Complete ", "answer."] }),
  {},
  async ({ attempt, index }) => {
    const directory = process.env[uiStreamCrashDirectoryEnvironmentVariable];
    if (directory === undefined || directory === "") throw new Error(`set ${uiStreamCrashDirectoryEnvironmentVariable} to the crash test's folder`);
    if (attempt === 1 && index === 2) await new FileGate(directory, uiStreamCrashGateName).waitUntilOpen();
  },
);

/** The crash test's session Flow. */
export const uiStreamCrashFlow = createAgentSessionFlow(runner, "UIStreamCrash");
