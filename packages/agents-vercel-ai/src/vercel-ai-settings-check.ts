/**
 * The `ToolLoopAgent` settings the session does not run, named when the
 * flow is built: refused when ignoring them would drop an approval, offer a
 * tool the agent hides, or change what an answer is; warned about (once,
 * with `console.warn`) when the session's own loop takes their place.
 */

/** Settings whose silent loss would break the agent's promise: each with what to do instead. */
const refusedSettings: Readonly<Record<string, string>> = {
  toolApproval: "the session would drop these approvals; give each tool its own needsApproval, or an approval in toolPolicies",
  activeTools: "the session offers every tool of the agent; leave out the tools the agent must not call",
  output: "the session stores the model's text answer, not structured output; leave it out",
  prepareStep: "the session makes each model call itself, one per RunModel Step, and would skip it; leave it out",
  experimental_toolCallers: "tools calling tools would run them outside their own Steps; leave it out",
};

/** Settings the session's loop replaces: each with what takes its place. */
const ignoredSettings: Readonly<Record<string, string>> = {
  stopWhen: "the session ends a turn at the model's answer; use the session option maxModelCallsPerTurn",
  toolChoice: "the model picks its tools",
  toolOrder: "tools are offered in the order of the agent's tools",
  toolCallConcurrency: "each call runs in its own Step",
  repairToolCall: "a call with arguments its schema refuses fails, and the model reads why",
  experimental_repairToolCall: "a call with arguments its schema refuses fails, and the model reads why",
  experimental_refineToolInput: "the tool Step checks the arguments with the tool's schema",
  prepareCall: "the session builds each model call from its stored messages",
  onStart: "use the session's events and tracing",
  onStepStart: "use the session's events and tracing",
  onStepFinish: "use the session's events and tracing",
  onStepEnd: "use the session's events and tracing",
  onFinish: "use the session's events and tracing",
  onToolExecutionStart: "use the session's events and tracing",
  onToolExecutionEnd: "use the session's events and tracing",
};

/**
 * Throws for a refused setting and warns once about the ignored ones, each
 * by name.
 */
export function checkVercelAiAgentSettings(settings: object): void {
  const given = Object.entries(settings).filter(([, value]) => value !== undefined).map(([name]) => name);
  for (const name of given) {
    const reason = refusedSettings[name];
    if (reason !== undefined) throw new TypeError(`the AI SDK agent setting ${name} is refused: ${reason}`);
  }
  const ignored = given.filter((name) => Object.hasOwn(ignoredSettings, name));
  if (ignored.length > 0) {
    console.warn(`perdure agents-vercel-ai: the session runs the agent's loop, so these AI SDK agent settings do not apply: ${ignored.map((name) => `${name} (${ignoredSettings[name]})`).join("; ")}`);
  }
}
