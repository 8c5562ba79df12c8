// The conversation: user bubbles on the right, the agent's turns on the left
// with their text, reasoning and tool calls in the order they happened.
import { isToolUIPart, type DynamicToolUIPart, type UIMessage } from "ai";
import { useState } from "react";
import type { WireToolCall } from "../../lib/api.ts";
import { RichText } from "./RichText.tsx";
import { ToolCallCard } from "./ToolCallCard.tsx";

type Part = UIMessage["parts"][number];

/** Tool parts as one shape: the UI stream sends dynamic tool parts, but a static one reads the same. */
export function asDynamicToolPart(part: Part): DynamicToolUIPart | null {
  if (!isToolUIPart(part)) return null;
  if (part.type === "dynamic-tool") return part;
  return { ...part, type: "dynamic-tool", toolName: part.type.slice("tool-".length) } as DynamicToolUIPart;
}

/** `turn-3-assistant` → `turn-3`. */
export function turnIdOfMessage(messageId: string): string | null {
  return messageId.endsWith("-assistant") ? messageId.slice(0, -"-assistant".length) : null;
}

function Reasoning(props: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="reasoning">
      <button type="button" className="reasoning-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        {props.streaming ? "Thinking…" : "Reasoning"} <span aria-hidden="true">{open ? "▾" : "▸"}</span>
      </button>
      {open && <div className="reasoning-text">{props.text}</div>}
    </div>
  );
}

export interface MessageListProps {
  messages: UIMessage[];
  /** The message receiving stream parts right now, if any. */
  streamingMessageId: string | null;
  toolRecords: ReadonlyMap<string, WireToolCall>;
  onApprovalResponse: (approvalId: string, approved: boolean, reason?: string) => void;
  approvalsDisabled: boolean;
}

export function MessageList(props: MessageListProps) {
  return (
    <>
      {props.messages.map((message) => {
        if (message.role === "user") {
          const text = message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
          return (
            <div key={message.id} className="message message-user" data-testid="user-message">
              <div className="bubble">{text}</div>
            </div>
          );
        }
        if (message.role !== "assistant") return null;
        const streaming = message.id === props.streamingMessageId;
        const turnId = turnIdOfMessage(message.id);
        const visible = message.parts.filter((part) => part.type === "text" || part.type === "reasoning" || isToolUIPart(part));
        const lastTextIndex = visible.findLastIndex((part) => part.type === "text");
        return (
          <div key={message.id} className="message message-assistant" data-testid="assistant-message" data-message-id={message.id}>
            <div className="avatar" aria-hidden="true">P</div>
            <div className="assistant-body">
              {turnId !== null && <div className="turn-label">{turnId.replace("-", " ")}</div>}
              {visible.length === 0 && streaming && <TypingDots />}
              {visible.map((part, index) => {
                if (part.type === "text") {
                  if (part.text === "") return null;
                  return <RichText key={index} text={part.text} streaming={streaming && index === lastTextIndex && index === visible.length - 1} />;
                }
                if (part.type === "reasoning") return <Reasoning key={index} text={part.text} streaming={streaming && index === visible.length - 1} />;
                const tool = asDynamicToolPart(part);
                if (tool === null) return null;
                return (
                  <ToolCallCard
                    key={tool.toolCallId}
                    part={tool}
                    record={props.toolRecords.get(tool.toolCallId)}
                    onApprovalResponse={props.onApprovalResponse}
                    disabled={props.approvalsDisabled}
                  />
                );
              })}
            </div>
          </div>
        );
      })}
    </>
  );
}

export function TypingDots() {
  return (
    <div className="typing" aria-label="The agent is working">
      <span />
      <span />
      <span />
    </div>
  );
}
