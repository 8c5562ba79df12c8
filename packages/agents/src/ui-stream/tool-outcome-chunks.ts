import type { AgentToolOutcome } from "./agent-session-record-reader.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";

/**
 * The part that gives a browser's tool part the call's committed outcome:
 * the final record's result, or the stored result text (the text the model
 * saw) once the record is gone. Undefined while the call is in progress or
 * nothing is known.
 */
export function toolOutcomeChunk(toolCallId: string, outcome: AgentToolOutcome): AgentUIMessageChunk | undefined {
  switch (outcome.kind) {
    case "in_progress":
    case "unknown":
      return undefined;
    case "stored":
      return { type: "tool-output-available", toolCallId, output: outcome.text, dynamic: true };
    case "final": {
      const { record } = outcome;
      if (record.status === "succeeded") return { type: "tool-output-available", toolCallId, output: record.output, dynamic: true };
      if (record.status === "rejected") return { type: "tool-output-denied", toolCallId };
      const errorText = record.status === "failed" ? (record.error ?? record.output) : (record.output ?? record.error);
      return { type: "tool-output-error", toolCallId, errorText: errorText ?? `the tool call ${record.status}`, dynamic: true };
    }
  }
}
