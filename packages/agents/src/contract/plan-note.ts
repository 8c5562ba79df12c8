/** `buildPlanNote`: the text that shows the model the plan in every model call. */
import type { AgentPlan } from "./values/agent-plan.ts";
import type { InteractionMode } from "./values/agent-state.ts";

function taskLines(plan: AgentPlan): string[] {
  return plan.tasks.map((task, index) => `${index + 1}. [${task.status}] ${task.content}`);
}

/**
 * The note that shows the model the plan, or null when there is nothing to
 * say (no plan, or a cleared one, outside a planning turn). Stepwise adds it
 * as user text before the turn's messages in every model call, so the model
 * always sees the latest plan; other runners may do the same.
 *
 * @example
 * const note = buildPlanNote(turn.plan ?? null, turn.interactionMode);
 * if (note !== null) input.splice(turnStart, 0, { type: "user_text", text: note });
 */
export function buildPlanNote(plan: AgentPlan | null, interactionMode: InteractionMode): string | null {
  const hasTasks = plan !== null && plan.status !== "cleared" && plan.tasks.length > 0;
  if (interactionMode === "planning") {
    const intro = "[Perdure] This is a planning turn: the user reviews the plan before any of it runs. " +
      "Write the plan with write_todos, one task per step, each pending, and do not carry out any step yet. " +
      "If you need to know more first, ask in your answer instead of writing a plan.";
    if (!hasTasks) return intro;
    return [intro, `The current ${plan.status} plan (revision ${plan.revision}); revise it as the user asks:`, ...taskLines(plan)].join("\n");
  }
  if (!hasTasks) return null;
  const keepCurrent = plan.status === "completed"
    ? "Every task is completed."
    : "Keep the task statuses current with write_todos as you work: send the whole list each time.";
  return [`[Perdure] The current plan (revision ${plan.revision}, ${plan.status}):`, ...taskLines(plan), keepCurrent].join("\n");
}
