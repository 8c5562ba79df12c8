/**
 * `AgentMessageChunk`: the value of one `AgentMessageChunks` instance, an
 * immutable run of older messages keyed by the sequence of its first one.
 * Its size is measured on the JSON this core writes, so a chunk's stored
 * text is exactly what {@link agentMessageChunkBytes} counts.
 */
import { agentMessageFromWire, agentMessageToWire, type AgentMessage } from "../../contract/values/agent-message.ts";
import { asWireObject, type WireObject } from "../../contract/values/wire.ts";

/** Messages in sequence order, without gaps. */
export interface AgentMessageChunk {
  messages: AgentMessage[];
}

/** The wire JSON of a chunk: `{ messages }`. */
export function agentMessageChunkToWire(chunk: AgentMessageChunk): WireObject {
  return { messages: chunk.messages.map(agentMessageToWire) };
}

export function agentMessageChunkFromWire(data: unknown): AgentMessageChunk {
  const object = asWireObject(data, "AgentMessageChunk");
  return { messages: Array.isArray(object.messages) ? object.messages.map(agentMessageFromWire) : [] };
}

/** Bytes of `{"messages":[` and `]}` around a chunk's messages. */
export const chunkEnvelopeBytes = Buffer.byteLength(JSON.stringify({ messages: [] }));

/** UTF-8 bytes of one message's wire JSON as this core writes it. */
export function agentMessageBytes(message: AgentMessage): number {
  return Buffer.byteLength(JSON.stringify(agentMessageToWire(message)));
}

/** UTF-8 bytes of a chunk of messages whose own sizes are `messageBytes`: the envelope, the messages and the commas between them. */
export function agentMessageChunkBytes(messageBytes: readonly number[]): number {
  return messageBytes.reduce((sum, bytes) => sum + bytes, chunkEnvelopeBytes) + Math.max(0, messageBytes.length - 1);
}
