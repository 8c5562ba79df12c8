import { InvalidInputError } from "@perdure/engine";
import { isToolEffect, type ToolEffect, type ToolPolicy } from "../values/tool-effect.ts";

/** Options of `createAgentSessionFlow`. */
export interface AgentSessionOptions {
  /**
   * Policies by tool name; they override framework metadata and the default effect.
   * @default {}
   */
  toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /**
   * Effect of a tool without a policy or framework metadata.
   * @default "unclassified"
   */
  defaultToolEffect?: ToolEffect;
  /**
   * Byte budget of the `AgentEvents` Stream, shared by every session of the Flow type.
   * @default 10_485_760 (10 MiB)
   */
  eventStreamCapacityBytes?: number;
  /**
   * Milliseconds after which a pending approval is rejected with "approval deadline passed".
   * @default none
   */
  interruptDeadlineMs?: number | null;
  /**
   * Largest user message `send_user_message` accepts, in UTF-8 bytes.
   * @default 262_144 (256 KiB)
   */
  maxUserMessageBytes?: number;
}

export interface ResolvedAgentSessionOptions {
  toolPolicies: Readonly<Record<string, ToolPolicy>>;
  defaultToolEffect: ToolEffect;
  eventStreamCapacityBytes: number;
  interruptDeadlineMs: number | null;
  maxUserMessageBytes: number;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved <= 0) {
    throw new InvalidInputError(`agent session option ${name} ${String(value)} is invalid: use a positive integer`);
  }
  return resolved;
}

/** Validates options and fills in every default (written once, here and in the TSDoc above). */
export function resolveAgentSessionOptions(options: AgentSessionOptions = {}): ResolvedAgentSessionOptions {
  const defaultToolEffect = options.defaultToolEffect ?? "unclassified";
  if (!isToolEffect(defaultToolEffect)) {
    throw new InvalidInputError(`defaultToolEffect ${JSON.stringify(defaultToolEffect)} is invalid: use read, idempotent_write, non_idempotent_write or unclassified`);
  }
  const toolPolicies = options.toolPolicies ?? {};
  for (const [name, policy] of Object.entries(toolPolicies)) {
    if (!isToolEffect(policy?.effect)) {
      throw new InvalidInputError(`toolPolicies.${name}.effect ${JSON.stringify(policy?.effect)} is invalid: use read, idempotent_write, non_idempotent_write or unclassified`);
    }
    if (policy.requiresApproval !== undefined && typeof policy.requiresApproval !== "boolean") {
      throw new InvalidInputError(`toolPolicies.${name}.requiresApproval ${JSON.stringify(policy.requiresApproval)} is invalid: use true or false`);
    }
  }
  const deadline = options.interruptDeadlineMs ?? null;
  return {
    toolPolicies,
    defaultToolEffect,
    eventStreamCapacityBytes: positiveInteger("eventStreamCapacityBytes", options.eventStreamCapacityBytes, 10 * 1024 * 1024),
    interruptDeadlineMs: deadline === null ? null : positiveInteger("interruptDeadlineMs", deadline, 1),
    maxUserMessageBytes: positiveInteger("maxUserMessageBytes", options.maxUserMessageBytes, 256 * 1024),
  };
}
