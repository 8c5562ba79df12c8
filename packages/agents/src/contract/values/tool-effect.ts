import { describeValue } from "@perdure/engine";

/** What running a tool does to the world; it picks the tool Step and the default approval. */
export type ToolEffect = "read" | "idempotent_write" | "non_idempotent_write" | "unclassified";

export const toolEffects: readonly ToolEffect[] = ["read", "idempotent_write", "non_idempotent_write", "unclassified"];

/** A session's policy for one tool. */
export interface ToolPolicy {
  effect: ToolEffect;
  /** @default false for `read` and `idempotent_write`, true for `non_idempotent_write` and `unclassified` */
  requiresApproval?: boolean;
}

/**
 * What a framework says of its own tool: its effect, and sometimes its own
 * approval flag (an AI SDK tool's `needsApproval`, say). Perdure's extension
 * of the contract's `frameworkEffect` argument.
 */
export interface FrameworkToolPolicy {
  effect?: ToolEffect;
  requiresApproval?: boolean;
}

/** The policy a tool call runs under. */
export interface ResolvedToolPolicy {
  effect: ToolEffect;
  requiresApproval: boolean;
}

/**
 * The contract's effects table: reads and idempotent writes run without
 * asking; a write that must not repeat, and a tool nobody classified, ask
 * first.
 */
export function defaultRequiresApproval(effect: ToolEffect): boolean {
  return effect === "non_idempotent_write" || effect === "unclassified";
}

/** True when the effect may run more than once safely, so its Step retries. */
export function isRetryableEffect(effect: ToolEffect): boolean {
  return effect === "read" || effect === "idempotent_write";
}

export function isToolEffect(value: unknown): value is ToolEffect {
  return typeof value === "string" && (toolEffects as readonly string[]).includes(value);
}

/**
 * The framework's argument to `turn.resolveToolPolicy`: the contract's
 * effect (`"read"`), Perdure's object form, or nothing. Anything else is a
 * runner bug, refused here rather than silently read as no effect.
 */
function readFrameworkPolicy(framework: unknown): FrameworkToolPolicy {
  if (framework === undefined || framework === null) return {};
  if (isToolEffect(framework)) return { effect: framework };
  if (typeof framework === "object" && !Array.isArray(framework)) {
    const { effect, requiresApproval } = framework as Record<string, unknown>;
    if ((effect === undefined || isToolEffect(effect)) && (requiresApproval === undefined || typeof requiresApproval === "boolean")) {
      return { ...(effect === undefined ? {} : { effect }), ...(requiresApproval === undefined ? {} : { requiresApproval }) };
    }
  }
  throw new TypeError(`framework effect ${describeValue(framework)} is invalid: pass one of ${toolEffects.join(", ")}, or { effect?, requiresApproval? }`);
}

/**
 * Resolves a tool's policy: the session's `toolPolicies` win, then what the
 * framework says of its tool, then `defaultToolEffect`; a missing
 * `requiresApproval` defaults by the effect.
 */
export function resolveToolPolicy(
  toolName: string,
  sessionPolicies: Readonly<Record<string, ToolPolicy>>,
  defaultToolEffect: ToolEffect,
  frameworkEffect?: ToolEffect | FrameworkToolPolicy,
): ResolvedToolPolicy {
  const framework = readFrameworkPolicy(frameworkEffect);
  const session = Object.hasOwn(sessionPolicies, toolName) ? sessionPolicies[toolName] : undefined;
  if (session !== undefined) {
    return { effect: session.effect, requiresApproval: session.requiresApproval ?? defaultRequiresApproval(session.effect) };
  }
  const effect = framework.effect ?? defaultToolEffect;
  return { effect, requiresApproval: framework.requiresApproval ?? defaultRequiresApproval(effect) };
}
