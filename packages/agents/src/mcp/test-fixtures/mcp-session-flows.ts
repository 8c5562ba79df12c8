/**
 * Stepwise session Flows whose scripted model calls one tool of the notes
 * server (stdio) per turn: the tool named in the user's message. Used in
 * this process and by the Worker child processes of the SIGKILL tests
 * (`mcp-session-worker-main.ts`), which read the server's folder from
 * `NOTES_MCP_FOLDER`.
 */
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import type { ToolPolicy } from "../../contract/values/tool-effect.ts";
import { McpToolSource } from "../mcp-tool-source.ts";
import type { McpServerConfig } from "../mcp-server-config.ts";
import { notesServerPath } from "./notes-mcp-servers.ts";

export const notesFolderEnvironmentVariable = "NOTES_MCP_FOLDER";
/** The URL of a Streamable HTTP notes server without protocol sessions, offered as server `remote`. */
export const notesRemoteUrlEnvironmentVariable = "NOTES_MCP_REMOTE_URL";

/** `call <tool> <json arguments>` in the user's text calls `<tool>`; the tool results end the turn. */
export function notesScriptedModel(): ScriptedModelClient {
  return new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: `Results: ${results.map((result) => result.output).join(" | ")}` };
    const match = /^call (\S+)(?: (.*))?$/.exec(ScriptedModelClient.userTexts(request).at(-1) ?? "");
    if (match === null) return { text: `I see ${request.tools.length} tools.` };
    return { toolCalls: [{ name: match[1]!, id: `${request.turnId}-call`, arguments: JSON.parse(match[2] ?? "{}") as Record<string, unknown> }] };
  });
}

export function notesStdioConfig(folder: string): McpServerConfig {
  return {
    transport: "stdio", name: "notes", command: process.execPath, args: ["--conditions=perdure-source", notesServerPath, "stdio"],
    env: { NOTES_MCP_LOG: `${folder}/server.log`, NOTES_MCP_GATES: folder },
  };
}

/** The write the crash tests park is approved by policy, so no approval waits; the task tool is a read by policy. */
export const notesToolPolicies: Record<string, ToolPolicy> = {
  notes__parked_write: { effect: "unclassified", requiresApproval: false },
  notes__index_notes: { effect: "read" },
  remote__index_notes: { effect: "read" },
};

export function createNotesSessionFlow(flowType: string, servers: readonly McpServerConfig[], onWarning?: (message: string) => void) {
  const source = new McpToolSource(servers, onWarning === undefined ? {} : { onWarning });
  // A loaded test machine can take more than the default 10 s to start the stdio server for the first listing.
  return createStepwiseAgentSessionFlow({
    name: "notes", instructions: "You keep notes.", model: notesScriptedModel(), toolSources: [source], toolPolicies: notesToolPolicies, toolSourceListingTimeoutMs: 60_000,
  }, flowType);
}

function folderFromEnvironment(): string {
  const folder = process.env[notesFolderEnvironmentVariable];
  if (folder === undefined || folder === "") throw new Error(`set ${notesFolderEnvironmentVariable} to the notes server's folder`);
  return folder;
}

/** The Flow of the Worker child processes; the test process builds it with its own folder. */
export function crashNotesFlow(folder: string = folderFromEnvironment(), remoteUrl: string | undefined = process.env[notesRemoteUrlEnvironmentVariable]) {
  const remote: McpServerConfig[] = remoteUrl === undefined || remoteUrl === "" ? [] : [{ transport: "streamable_http", name: "remote", url: remoteUrl }];
  return createNotesSessionFlow("McpCrashNotes", [notesStdioConfig(folder), ...remote]);
}
