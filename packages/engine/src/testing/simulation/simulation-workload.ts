/**
 * The Flow type the simulation runs: a retried Step, a Timer-or-Channel
 * wait, a single-attempt Step with a recovery route, and a heartbeating
 * Step, plus RPCs that add notes and poke the wait. Each process builds its
 * own copy, whose handlers sleep on that process's virtual timers. Handlers
 * draw from a random stream of their Flow, Step and attempt, so what an
 * attempt does never depends on which process runs it.
 */
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { channel } from "../../channel/channel.ts";
import { TerminalError } from "../../errors/terminal-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { completeFlow, moveTo } from "../../step/decision.ts";
import type { RecoveryError } from "../../step/recovery-error.ts";
import { defineStep } from "../../step/step.ts";
import type { StepContext } from "../../step/step-context.ts";
import { anyOf, received, timer } from "../../condition/condition.ts";
import { seededRandom } from "../seeded-random.ts";

/** Input of a simulated order. */
export interface SimulatedOrderInput {
  napMs: number;
}

/** A handler event, recorded outside the store. */
export interface HandlerEffect {
  process: string;
  flowId: string;
  step: string;
  attempt: number;
  event: "start" | "end";
}

/** What a process gives its copy of the Flow. */
export interface WorkloadServices {
  process: string;
  sleep(delayMs: number): Promise<void>;
  effects: HandlerEffect[];
  /** Seed of the run, mixed into every handler's random stream. */
  seed: number;
}

/** One instance per committed attempt, keyed `<Step>@<attempt>`: a second commit of a Step shows as a second key. */
export const commits = attributeMap<number>("Commits");
/** One instance per acknowledged `addNote` RPC. */
export const notes = attributeMap<string>("Notes");
export const charged = attribute<boolean>("Charged");
export const recovery = attribute<RecoveryError>("Recovery");
export const pokes = channel<string>("Pokes");

/** Attribute names whose every acknowledged write must be found at the end. */
export const trackedAttributeNames: ReadonlySet<string> = new Set([commits.name, notes.name]);

/** The Step types an order may commit, in order; Charge or ChargeRecover, not both. */
export const orderSteps = ["Reserve", "Nap", "Charge", "ChargeRecover", "Ship"] as const;

function hashText(text: string): number {
  let hash = 2166136261;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
  return hash >>> 0;
}


/** Builds the simulated order Flow for one process. */
export function simulatedOrderFlow(services: WorkloadServices) {
  const randomOf = (context: StepContext): (() => number) => seededRandom(hashText(`${services.seed}/${context.flowId}/${context.stepType}/${context.attempt}`));
  const record = (context: StepContext, event: HandlerEffect["event"]): void => {
    services.effects.push({ process: services.process, flowId: context.flowId, step: context.stepType, attempt: context.attempt, event });
  };
  const commitHere = (context: StepContext): void => {
    context.write(commits.instance(`${context.stepType}@${context.attempt}`), context.attempt);
  };
  const retry = { initialIntervalMs: 50, backoffCoefficient: 2, maximumIntervalMs: 800, maximumAttempts: 60 };

  const Reserve = defineStep<SimulatedOrderInput>("Reserve", {
    execute: async (context, input) => {
      record(context, "start");
      const random = randomOf(context);
      await services.sleep(Math.floor(random() * 300));
      if (random() < 0.25) throw new Error("the warehouse did not answer");
      commitHere(context);
      record(context, "end");
      return moveTo("Nap", input);
    },
    executeOptions: { retry },
  });

  const Nap = defineStep<SimulatedOrderInput>("Nap", {
    waitUntil: (_context, input) => anyOf(timer("nap", { afterMs: input.napMs }), received(pokes)),
    execute: (context, input) => {
      commitHere(context);
      return moveTo("Charge", input);
    },
    waitUntilOptions: { retry },
    executeOptions: { retry },
  });

  // The external effect that must never run twice.
  const Charge = defineStep<SimulatedOrderInput>("Charge", {
    execute: async (context, input) => {
      record(context, "start");
      const random = randomOf(context);
      await services.sleep(Math.floor(random() * 400));
      if (random() < 0.1) throw new TerminalError("card declined");
      context.write(charged, true);
      commitHere(context);
      record(context, "end");
      return moveTo("Ship", input);
    },
    executeOptions: { retry: { maximumAttempts: 1 } },
    failureRoute: "ChargeRecover",
  });

  const ChargeRecover = defineStep<SimulatedOrderInput>("ChargeRecover", {
    execute: (context, input) => {
      if (context.recoveryError !== undefined) context.write(recovery, context.recoveryError);
      commitHere(context);
      return moveTo("Ship", input);
    },
    executeOptions: { retry },
  });

  const Ship = defineStep<SimulatedOrderInput>("Ship", {
    execute: async (context) => {
      record(context, "start");
      const random = randomOf(context);
      const legs = 1 + Math.floor(random() * 4);
      for (let leg = 0; leg < legs; leg++) {
        await services.sleep(100 + Math.floor(random() * 400));
        await context.heartbeat(`leg ${leg}`);
      }
      if (random() < 0.15) throw new Error("the truck broke down");
      commitHere(context);
      record(context, "end");
      return completeFlow({ shipped: true });
    },
    executeOptions: { retry, heartbeatTimeoutMs: 1500 },
  });

  return defineFlow({
    type: "SimulatedOrder",
    start: "Reserve",
    steps: [Reserve, Nap, Charge, ChargeRecover, Ship],
    persistence: { commits, notes, charged, recovery, pokes },
    rpcs: {
      addNote: rpc<{ key: string; text: string }, boolean>({
        name: "addNote",
        handler: async (context, input) => {
          await context.write(notes.instance(input.key), input.text);
          return true;
        },
      }),
      poke: rpc<string, boolean>({
        name: "poke",
        handler: async (context, text) => {
          await context.publish(pokes, text);
          return true;
        },
      }),
    },
  });
}
