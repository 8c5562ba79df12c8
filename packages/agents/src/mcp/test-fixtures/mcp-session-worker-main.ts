/** Entry module of the Worker child processes of the MCP SIGKILL tests. */
import { runAgentWorkerProcess } from "../../testing/run-agent-worker-process.ts";
import { crashNotesFlow } from "./mcp-session-flows.ts";

await runAgentWorkerProcess([crashNotesFlow()]);
