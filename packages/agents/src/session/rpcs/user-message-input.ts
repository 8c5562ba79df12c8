/** The checks every RPC that takes a user's text applies before the message is queued or steered. */
import { InvalidInputError } from "@perdure/engine";
import type { AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import { isBlankText } from "../../contract/values/result-texts.ts";
import { isoNow, type StoreTimeSource } from "../session-operations.ts";
import type { ResolvedAgentSessionOptions } from "../session-options.ts";

/**
 * The message to queue or steer, or `false` when the session refuses it
 * (blank by `str.strip()`, or `planMode` while plan mode is off); a text
 * over `maxUserMessageBytes` throws `InvalidInputError`.
 */
export function acceptedUserMessage(text: string, planMode: boolean | undefined, options: ResolvedAgentSessionOptions, clock: StoreTimeSource, clientMessageId?: string): AgentUserMessage | false {
  if (isBlankText(text)) return false;
  if (planMode === true && !options.planModeEnabled) return false;
  const bytes = Buffer.byteLength(text);
  if (bytes > options.maxUserMessageBytes) {
    throw new InvalidInputError(`user message of ${bytes} bytes is over the session's maxUserMessageBytes of ${options.maxUserMessageBytes}`);
  }
  return { text, ...(planMode === true ? { planMode: true } : {}), sentAt: isoNow(clock), ...(clientMessageId === undefined ? {} : { clientMessageId }) };
}
