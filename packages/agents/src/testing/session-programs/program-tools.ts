/**
 * The tool catalogue of session programs: one tool per combination of
 * effect and approval the contract distinguishes. A program picks tools from
 * it; the runner offers all of them with these policies.
 */
import type { ToolEffect } from "../../contract/values/tool-effect.ts";

/** One tool of the catalogue. */
export interface ProgramToolSpec {
  name: string;
  effect: ToolEffect;
  /** The tool's own approval flag; undefined leaves the default of its effect. */
  requiresApproval: boolean | undefined;
}

/** Every tool a program may call. */
export const programToolSpecs: readonly ProgramToolSpec[] = [
  { name: "lookup_record", effect: "read", requiresApproval: undefined },
  { name: "inspect_vault", effect: "read", requiresApproval: true },
  { name: "set_flag", effect: "idempotent_write", requiresApproval: undefined },
  { name: "replace_document", effect: "idempotent_write", requiresApproval: true },
  { name: "send_payment", effect: "non_idempotent_write", requiresApproval: undefined },
  { name: "post_message", effect: "non_idempotent_write", requiresApproval: false },
  { name: "run_command", effect: "unclassified", requiresApproval: undefined },
];

/** The approval a tool gets: its own flag, else the default of its effect (writes that must not repeat and unclassified tools ask). */
export function programToolRequiresApproval(spec: ProgramToolSpec): boolean {
  return spec.requiresApproval ?? (spec.effect === "non_idempotent_write" || spec.effect === "unclassified");
}

/** The catalogue entry named `name`; throws for a name it does not hold. */
export function programToolSpec(name: string): ProgramToolSpec {
  const spec = programToolSpecs.find((candidate) => candidate.name === name);
  if (spec === undefined) throw new RangeError(`session programs have no tool named ${JSON.stringify(name)}: use one of ${programToolSpecs.map((tool) => tool.name).join(", ")}`);
  return spec;
}
