import { describeValue } from "@perdure/engine";

/** What running a tool does to the world; it picks the tool Step and the default approval. */
export type ToolEffect = "read" | "idempotent_write" | "non_idempotent_write" | "unclassified";

export const toolEffects: readonly ToolEffect[] = ["read", "idempotent_write", "non_idempotent_write", "unclassified"];

/** A session's policy for one tool. */
export interface ToolPolicy {
  effect: ToolEffect;
  /**
   * Whether calls ask for approval. Leave it out to keep the stricter of
   * the effect's default and the framework's own approval (an AI SDK tool's
   * `needsApproval`, a Mastra tool's `requireApproval`); `false` turns the
   * framework's approval off, which the session logs once.
   * @default the effect's default (true for `non_idempotent_write` and `unclassified`), or true when the framework asks for the call
   */
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
 * Resolves a tool's policy. The session's `toolPolicies` pick the effect,
 * then what the framework says of its tool, then `defaultToolEffect`.
 * Approval: the stricter wins. A session policy that names only an effect
 * asks when its effect asks by default or when the framework asks for this
 * call; only an explicit `requiresApproval: false` in the session's policy
 * turns a framework's approval off (see {@link approvalOverrideOf}). Without
 * a session policy, the framework's own setting applies, else the effect's
 * default.
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
    const requiresApproval = session.requiresApproval ?? (defaultRequiresApproval(session.effect) || framework.requiresApproval === true);
    return { effect: session.effect, requiresApproval };
  }
  const effect = framework.effect ?? defaultToolEffect;
  return { effect, requiresApproval: framework.requiresApproval ?? defaultRequiresApproval(effect) };
}

/**
 * True when the session's policy of `toolName` turns off an approval the
 * framework asks for (`requiresApproval: false` against a framework's
 * `true`), which the session logs once per Flow type and tool.
 */
export function approvalOverrideOf(
  toolName: string,
  sessionPolicies: Readonly<Record<string, ToolPolicy>>,
  frameworkEffect?: ToolEffect | FrameworkToolPolicy,
): boolean {
  const session = Object.hasOwn(sessionPolicies, toolName) ? sessionPolicies[toolName] : undefined;
  return session?.requiresApproval === false && readFrameworkPolicy(frameworkEffect).requiresApproval === true;
}
