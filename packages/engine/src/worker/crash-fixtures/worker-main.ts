/**
 * Entry module of a crash-test Worker process: runs every crash-test Flow type
 * on the SQLite file named by PERDURE_CRASH_STORE_PATH (optional:
 * PERDURE_CRASH_CONCURRENCY, PERDURE_CRASH_WORKER_ID).
 */
import { runWorkerProcess } from "../../testing/worker-process.ts";
import { crashFlows } from "./flows.ts";

const storePath = process.env.PERDURE_CRASH_STORE_PATH;
if (storePath === undefined || storePath === "") throw new Error("set PERDURE_CRASH_STORE_PATH to the SQLite file of the test");
const concurrency = Number(process.env.PERDURE_CRASH_CONCURRENCY ?? "8");
const workerId = process.env.PERDURE_CRASH_WORKER_ID;

await runWorkerProcess({ flows: crashFlows, storePath, workerOptions: { concurrency, ...(workerId === undefined ? {} : { workerId }) } });
