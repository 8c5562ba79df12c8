// Slot for the session's plan (plan mode, `write_todos`, `execute_plan`).
//
// The snapshot's `plan` is always null until plan mode lands in
// @perdure/agents, so this renders nothing today. When it lands: show the
// plan's tasks as a checklist with their status, its revision, and an
// "Execute plan" button calling an `execute_plan` route, above the composer.
export function PlanView(props: { plan: unknown }) {
  if (props.plan === null || props.plan === undefined) return null;
  return null;
}
