/**
 * What a {@link KillableWorkerProcess} parent and its {@link runAgentWorkerProcess}
 * child agree on: where the engine is, and the line that says the Worker runs.
 */

/**
 * The environment variable through which a Worker child learns the engine
 * address (`sqlite:<absolute path>`).
 *
 * @example
 * const address = process.env[engineAddressEnvironmentVariable];
 */
export const engineAddressEnvironmentVariable = "PERDURE_ENGINE_ADDRESS";

/**
 * The line a Worker child prints, followed by its Worker ID, once its Worker
 * is registered and claiming work.
 *
 * @example
 * const extraOutput = worker.output().split("\n").filter((line) => !line.startsWith(agentWorkerReadyLine));
 */
export const agentWorkerReadyLine = "perdure agents test Worker ready";
