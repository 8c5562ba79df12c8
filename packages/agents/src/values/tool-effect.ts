/** What running a tool does to the world; it picks the tool Step and the default approval. */
export type ToolEffect = "read" | "idempotent_write" | "non_idempotent_write" | "unclassified";

export const toolEffects: readonly ToolEffect[] = ["read", "idempotent_write", "non_idempotent_write", "unclassified"];

/** A session's policy for one tool. */
export interface ToolPolicy {
  effect: ToolEffect;
  /** @default false for `read`, true for every other effect */
  requiresApproval?: boolean;
}

/** The policy a tool call runs under. */
export interface ResolvedToolPolicy {
  effect: ToolEffect;
  requiresApproval: boolean;
}

/** Only reads run without asking; every write, and a tool nobody classified, asks first. */
export function defaultRequiresApproval(effect: ToolEffect): boolean {
  return effect !== "read";
}

/** True when the effect may run more than once safely, so its Step retries. */
export function isRetryableEffect(effect: ToolEffect): boolean {
  return effect === "read" || effect === "idempotent_write";
}

export function isToolEffect(value: unknown): value is ToolEffect {
  return typeof value === "string" && (toolEffects as readonly string[]).includes(value);
}

/**
 * Resolves a tool's policy: the session's `toolPolicies` win, then the
 * framework's own metadata, then `defaultToolEffect`.
 */
export function resolveToolPolicy(
  toolName: string,
  sessionPolicies: Readonly<Record<string, ToolPolicy>>,
  defaultToolEffect: ToolEffect,
  framework?: { effect?: ToolEffect; requiresApproval?: boolean },
): ResolvedToolPolicy {
  const session = Object.hasOwn(sessionPolicies, toolName) ? sessionPolicies[toolName] : undefined;
  if (session !== undefined) {
    return { effect: session.effect, requiresApproval: session.requiresApproval ?? defaultRequiresApproval(session.effect) };
  }
  const effect = framework?.effect ?? defaultToolEffect;
  return { effect, requiresApproval: framework?.requiresApproval ?? defaultRequiresApproval(effect) };
}
