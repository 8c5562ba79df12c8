/** The Claude Code session ID of a Perdure session: a UUID derived from the flow ID, the same in every run and every Worker. */
import { createHash } from "node:crypto";

/**
 * A UUID (version 4 layout, as the harness requires) from the SHA-256 of
 * the flow ID, so every run of a session resumes the same harness session.
 *
 * @example
 * claudeSessionIdOf("session-1"); // the same UUID on every call
 */
export function claudeSessionIdOf(flowId: string): string {
  const hex = createHash("sha256").update(`perdure-claude-code-session:${flowId}`).digest("hex");
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
