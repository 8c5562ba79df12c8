/**
 * `@perdure/engine`: durable execution on a database, with no engine server.
 *
 * Declare a Flow type (Steps, persistence, RPCs), run a Worker, and talk to
 * Flow instances through a Client. Stores sit behind subpaths:
 * `@perdure/engine/sqlite` (embedded) and `@perdure/engine/postgres` (distributed).
 *
 * @example
 * import { attribute, Client, defineFlow, defineStep, completeFlow, Worker } from "@perdure/engine";
 * import { SqliteStore } from "@perdure/engine/sqlite";
 *
 * const greeting = attribute<string>("Greeting");
 * const Greet = defineStep<{ name: string }>("Greet", {
 *   execute: (ctx, input) => {
 *     ctx.write(greeting, `hello ${input.name}`);
 *     return completeFlow();
 *   },
 * });
 * const flow = defineFlow({ type: "Greeter", start: "Greet", steps: [Greet], persistence: { greeting } });
 * const store = SqliteStore.open({ path: ".perdure/example.db" });
 * const worker = new Worker({ store, flows: [flow] });
 * await worker.start();
 * await new Client({ store }).start(flow, "greeting-1", { name: "Ada" });
 */
export { attribute, attributeMap } from "./attribute/attribute.ts";
export type { AttributeDefinition, AttributeInstanceRef, AttributeMapDefinition, AttributeMapSelection, AttributeOptions, AttributeRef } from "./attribute/attribute.ts";
export { channel, channelMap } from "./channel/channel.ts";
export type { ChannelDefinition, ChannelInstanceRef, ChannelMapDefinition, ChannelMessage, ChannelOptions, ChannelRef } from "./channel/channel.ts";
export { stream } from "./stream/stream.ts";
export type { StreamDefinition, StreamOptions } from "./stream/stream.ts";
export type { ReadStreamOptions, StreamMessage, StreamReadResult } from "./stream/stream-reader.ts";
export { maxResumeTokenLength } from "./stream/resume-token.ts";
export { allOf, anyOf, received, timer } from "./condition/condition.ts";
export type { ChannelBound, ChannelCondition, Condition, Conditions, TimerCondition } from "./condition/condition.ts";
export { defineStep } from "./step/step.ts";
export type { StepDefinition, StepSpec } from "./step/step.ts";
export type { ExecuteContext, StepContext } from "./step/step-context.ts";
export { completeFlow, deadEnd, failFlow, movement, moveTo, moveToMany } from "./step/decision.ts";
export type { DecisionOptions, Movement, StepDecision } from "./step/decision.ts";
export type { LoadSelection, MethodOptions, MovementOptions, PlainAttributeReader, StepOptions } from "./step/step-options.ts";
export type { RetryPolicy } from "./step/retry-policy.ts";
export { StepAttemptProgress } from "./step/recovery-error.ts";
export type { RecoveryError } from "./step/recovery-error.ts";
export { defineFlow } from "./flow/flow.ts";
export type { FlowCore, FlowDefinition, FlowSpec, PersistenceDefinition, RpcReference } from "./flow/flow.ts";
export type { FlowStatus } from "./store/flow-status.ts";
export { rpc } from "./rpc/rpc.ts";
export type { ActiveExecution, RpcContext, RpcPlanContext, RpcPublishPlan, RpcSpec } from "./rpc/rpc.ts";
export { Worker } from "./worker/worker.ts";
export type { WorkerCloseOptions, WorkerCloseResult, WorkerOptions } from "./worker/worker.ts";
export type { FailedAttempt } from "./worker/failed-attempt.ts";
export { failedAttemptLogFields, failedAttemptMessage } from "./worker/failed-attempt.ts";
export type { FailedAttemptLogFields, LogFields, PerdureLogger } from "./logging/perdure-logger.ts";
export { redactedText, redactSecrets, redactSecretsInText } from "./logging/redact-secrets.ts";
export { Client } from "./client/client.ts";
export type { ClientOptions, FlowDescription, FlowStateReader, InitialAttribute, StartFlowOptions, StepHistoryEntry, WaitForFlowOptions } from "./client/client.ts";
export type { InvokeRpcOptions } from "./client/invoke-rpc-options.ts";
export type { Codec } from "./internal/codec.ts";
export type { Store, StoreTransaction, WakeEvent } from "./store/store.ts";
export type { StoreClock } from "./store/store-clock.ts";
export { PerdureError } from "./errors/perdure-error.ts";
export { describeValue } from "./errors/describe-value.ts";
export { ChannelMessageNotFoundError } from "./errors/channel-message-not-found-error.ts";
export { FlowAlreadyExistsError } from "./errors/flow-already-exists-error.ts";
export { FlowNotFoundError } from "./errors/flow-not-found-error.ts";
export { FlowNotRunningError } from "./errors/flow-not-running-error.ts";
export { InvalidDefinitionError } from "./errors/invalid-definition-error.ts";
export { InvalidInputError } from "./errors/invalid-input-error.ts";
export { InvalidResumeTokenError } from "./errors/invalid-resume-token-error.ts";
export { RetryAfterError } from "./errors/retry-after-error.ts";
export { RpcLockConflictError } from "./errors/rpc-lock-conflict-error.ts";
export { StoreClosedError } from "./errors/store-closed-error.ts";
export { TerminalError } from "./errors/terminal-error.ts";
export { UnknownStepError } from "./errors/unknown-step-error.ts";
export { UnloadedStateError } from "./errors/unloaded-state-error.ts";
export { ValueTooLargeError } from "./errors/value-too-large-error.ts";
