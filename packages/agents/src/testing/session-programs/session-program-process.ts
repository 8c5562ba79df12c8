/** What the session-program tests and their Worker processes agree on: environment variables and the Worker ID. */

/** The seed whose program a Worker process runs. */
export const sessionProgramSeedEnvironmentVariable = "PERDURE_SESSION_PROGRAM_WORKER_SEED";

/** The InvocationLog file a Worker process's tools append their runs to. */
export const sessionProgramToolLogEnvironmentVariable = "PERDURE_SESSION_PROGRAM_TOOL_LOG";

/** The Worker ID of every process of a run: a replacement fails over the killed process's claims at once. */
export const sessionProgramWorkerId = "session-program-worker";
