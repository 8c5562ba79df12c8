/**
 * A scripted Stepwise agent with a write tool and a read tool, for fork and
 * replay tests: each user message "note <n>" makes it write that note, every
 * third turn read the notes back, then answer. Tool runs are counted in
 * `noteToolRuns`, so a test sees any run a fork or a replay must not make.
 */
import { ScriptedModelClient } from "../../../stepwise/scripted-model-client.ts";
import { functionTool } from "../../../stepwise/function-tool.ts";
import { createStepwiseAgentSessionFlow } from "../../../stepwise/create-stepwise-agent-session-flow.ts";
import type { AgentSessionFlow } from "../../create-agent-session-flow.ts";

/** Every tool run of this process, oldest first. */
export const noteToolRuns: { tool: string; text: string }[] = [];
const notes: string[] = [];

export interface NoteTakingAgentOptions {
  /** The write tool's description, which a replay test changes. @default "Write a note." */
  writeNoteDescription?: string;
  /** The write tool's effect class, which a replay test changes. @default "non_idempotent_write" */
  writeNoteEffect?: "non_idempotent_write" | "read";
  /** A description of the write tool's `text` argument, which a replay test adds. @default none */
  textArgumentDescription?: string;
}

function turnNumberOf(text: string | undefined): number {
  return Number(/note (\d+)/.exec(text ?? "")?.[1] ?? "0");
}

/** The note-taking agent's model: write, sometimes read, then answer. */
export function createNoteTakingModel(): ScriptedModelClient {
  return new ScriptedModelClient((request) => {
    const number = turnNumberOf(ScriptedModelClient.userTexts(request).at(-1));
    const results = ScriptedModelClient.toolResults(request);
    if (results.length === 0) return { toolCalls: [{ name: "write_note", arguments: { text: `note ${number}` }, id: `write-${number}` }] };
    if (results.length === 1 && number % 3 === 0) return { toolCalls: [{ name: "read_notes", arguments: {}, id: `read-${number}` }] };
    return { text: `noted ${number} (${results.map((result) => result.output).join("; ")})` };
  });
}

export function createNoteTakingAgentFlow(model: ScriptedModelClient, options: NoteTakingAgentOptions = {}): AgentSessionFlow {
  return createStepwiseAgentSessionFlow({
    name: "note-taker",
    instructions: "Write down what the user says, and read the notes back now and then.",
    model,
    // A small window, so forks cut through chunks as well as the window.
    messageWindowSize: 6,
    messageChunkSize: 4,
    tools: [
      functionTool<{ text: string }>({
        name: "write_note",
        description: options.writeNoteDescription ?? "Write a note.",
        parameters: {
          type: "object",
          properties: { text: { type: "string", ...(options.textArgumentDescription === undefined ? {} : { description: options.textArgumentDescription }) } },
          required: ["text"],
        },
        effect: options.writeNoteEffect ?? "non_idempotent_write",
        requiresApproval: false,
        execute: ({ text }) => {
          noteToolRuns.push({ tool: "write_note", text });
          notes.push(text);
          return `wrote ${text}`;
        },
      }),
      functionTool<Record<string, never>>({
        name: "read_notes",
        description: "Read every note.",
        parameters: { type: "object", properties: {} },
        effect: "read",
        execute: () => {
          noteToolRuns.push({ tool: "read_notes", text: "" });
          return notes.length > 0 ? "the notes are in order" : "there are no notes";
        },
      }),
    ],
  }, "NoteTaker");
}
