/** Lifecycle of a Flow instance. A running Flow with nothing active is idle, not finished. */
export type FlowStatus = "running" | "completed" | "failed" | "stopped";
