/**
 * The order Flow of the engine's boundary-kill test, imported by the test
 * (to start it and read it back) and by the Worker processes the loop kills
 * (to run it). Reserve (retried) → AwaitRelease (waits for the `release` RPC)
 * → Charge (single attempt, failure route RecordChargeUnknown). Each Step
 * records its side effect in an append-only file outside the store, so the
 * test counts what really ran; the release driver runs inside the Worker
 * process and reconciles from the store, so a replacement picks it up.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { attribute } from "../../attribute/attribute.ts";
import { channel } from "../../channel/channel.ts";
import type { Client } from "../../client/client.ts";
import { FlowNotFoundError } from "../../errors/flow-not-found-error.ts";
import { StoreClosedError } from "../../errors/store-closed-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { completeFlow, moveTo } from "../../step/decision.ts";
import type { RecoveryError } from "../../step/recovery-error.ts";
import type { StepContext } from "../../step/step-context.ts";
import { defineStep } from "../../step/step.ts";
import { anyOf, received } from "../../condition/condition.ts";

/** The one order of a run (each run has a store of its own). */
export const orderFlowId = "order-1";

/** The Worker ID of every process of a run: a replacement fails over the killed process's claims at once. */
export const orderWorkerId = "boundary-kill-order-worker";

/** Environment variables of the order Worker processes. */
export const orderEnvironmentVariables = {
  /** The run's SQLite file. */
  storePath: "PERDURE_BOUNDARY_KILL_ORDER_STORE",
  /** The Worker ID. @default {@link orderWorkerId} */
  workerId: "PERDURE_BOUNDARY_KILL_ORDER_WORKER_ID",
  /** Charge's attempts (see {@link OrderFlowOptions}). @default 1 */
  chargeAttempts: "PERDURE_BOUNDARY_KILL_ORDER_CHARGE_ATTEMPTS",
  /** `1`: the store runs every commit, claim and start as a general transaction, without its one-request operations. @default unset */
  generalPath: "PERDURE_BOUNDARY_KILL_ORDER_GENERAL_PATH",
} as const;

/** Input of the order Flow. */
export interface OrderInput {
  /** The append-only file each Step's side effect is recorded in. */
  effectLogPath: string;
}

/** One line of the effect log. */
export interface OrderEffect {
  effect: "reserve" | "charge";
  processId: number;
  attempt: number;
}

/** Incremented by Reserve's commit: 1 when it committed exactly once. */
export const reservations = attribute<number>("Reservations");
/** Set by the `release` RPC. */
export const released = attribute<boolean>("Released");
/** Incremented by AwaitRelease's commit by the messages it consumed. */
export const releasesConsumed = attribute<number>("ReleasesConsumed");
/** `charged` by Charge's commit, `unknown` by its failure route. */
export const chargeOutcome = attribute<"charged" | "unknown">("ChargeOutcome");
/** The recovery error RecordChargeUnknown received. */
export const chargeRecovery = attribute<RecoveryError>("ChargeRecovery");
const releaseChannel = channel<{ releasedAt: number }>("Release");

function recordEffect(input: OrderInput, context: StepContext, effect: OrderEffect["effect"]): void {
  const entry: OrderEffect = { effect, processId: process.pid, attempt: context.attempt };
  appendFileSync(input.effectLogPath, `${JSON.stringify(entry)}\n`);
}

/** Every recorded side effect, oldest first. */
export function readOrderEffects(effectLogPath: string): OrderEffect[] {
  if (!existsSync(effectLogPath)) return [];
  return readFileSync(effectLogPath, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as OrderEffect);
}

const Reserve = defineStep<OrderInput>("Reserve", {
  execute: (context, input) => {
    recordEffect(input, context, "reserve");
    context.write(reservations, (context.read(reservations) ?? 0) + 1);
    return moveTo("AwaitRelease", input);
  },
});

const AwaitRelease = defineStep<OrderInput>("AwaitRelease", {
  waitUntil: () => anyOf(received(releaseChannel)),
  execute: (context, input) => {
    context.write(releasesConsumed, (context.read(releasesConsumed) ?? 0) + context.consumed(releaseChannel).length);
    return moveTo("Charge", input);
  },
});

/** Options of {@link createOrderFlow}. */
export interface OrderFlowOptions {
  /**
   * Attempts of Charge. Anything but 1 is a broken Flow (a charge that may
   * run twice), which the test uses to show the loop catches it.
   * @default 1
   */
  chargeAttempts?: number;
}

/** Reserve → AwaitRelease → Charge (single attempt) → done, or RecordChargeUnknown. */
export function createOrderFlow(options: OrderFlowOptions = {}) {
  // Default options but the attempts: the charge must never run twice.
  const Charge = defineStep<OrderInput>("Charge", {
    executeOptions: { retry: { maximumAttempts: options.chargeAttempts ?? 1 } },
    failureRoute: "RecordChargeUnknown",
    execute: (context, input) => {
      recordEffect(input, context, "charge");
      context.write(chargeOutcome, "charged");
      return completeFlow({ outcome: "charged" });
    },
  });
  const RecordChargeUnknown = defineStep<OrderInput>("RecordChargeUnknown", {
    execute: (context) => {
      context.write(chargeOutcome, "unknown");
      if (context.recoveryError !== undefined) context.write(chargeRecovery, context.recoveryError);
      return completeFlow({ outcome: "unknown" });
    },
  });
  return defineFlow({
    type: "BoundaryKillOrder",
    start: "Reserve",
    steps: [Reserve, AwaitRelease, Charge, RecordChargeUnknown],
    persistence: { reservations, released, releasesConsumed, chargeOutcome, chargeRecovery, releaseChannel },
    rpcs: {
      release: rpc<null, boolean>({
        name: "release",
        handler: async (context) => {
          if ((await context.read(released)) === true) return false;
          await context.write(released, true);
          await context.publish(releaseChannel, { releasedAt: Date.now() });
          return true;
        },
      }),
    },
  });
}

/** The order Flow as the test means it: Charge has one attempt. */
export const orderFlow = createOrderFlow();

/** The order Flow type, whatever its options. */
export type OrderFlow = typeof orderFlow;

/**
 * Releases the order once AwaitRelease waits for it, as an operator would:
 * polls the store and invokes `release` until the store says it was
 * released. Waiting for the wait (not only the reservation) keeps the
 * boundaries of every run in one order, however loaded the machine, so the
 * n-th boundary is the same one in every run. Runs in the Worker process,
 * so a kill inside the RPC's commit is one of the loop's boundaries and a
 * replacement finishes the job.
 */
export async function driveOrderRelease(client: Client, flow: OrderFlow, flowId: string): Promise<void> {
  for (;;) {
    try {
      const [isReleased] = await client.getAttributes(flowId, released);
      if (isReleased === true) return;
      const { executions } = await client.describe(flowId);
      if (executions.some((execution) => execution.stepType === "AwaitRelease" && execution.status === "waiting")) await client.invokeRPC(flow.release, flowId, null);
    } catch (error) {
      if (StoreClosedError.isInstance(error)) return;
      if (!FlowNotFoundError.isInstance(error)) console.error("order release driver:", error);
    }
    await delay(10);
  }
}
