/** `schedule_turn` and `cancel_scheduled_turn`: the session's scheduled turns, a Perdure extension of the contract's RPCs. */
import { rpc } from "@perdure/engine";
import type { ScheduledTurn } from "../../contract/values/scheduled-turn.ts";
import { requireRunningSession } from "../rpcs/require-running-session.ts";
import { inputField, inputObject } from "../rpcs/rpc-input.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { AgentStepType } from "../step-types.ts";
import { addScheduledTurn, checkScheduleId, parseScheduleTurnInput, type ScheduleTurnInput } from "./scheduled-turn-requests.ts";

/** Input of `cancel_scheduled_turn`. */
export interface CancelScheduledTurnInput {
  scheduleId: string;
}

function parseCancelScheduledTurn(raw: unknown): CancelScheduledTurnInput {
  const object = inputObject(raw, "cancel_scheduled_turn");
  return { scheduleId: checkScheduleId(inputField(object, "scheduleId", "schedule_id")) };
}

export function createScheduledTurnRpcs(environment: SessionEnvironment) {
  const { persistence, options } = environment;
  return {
    /**
     * Stores a schedule and starts its wait, in one commit; returns the
     * schedule. The same request with the same `scheduleId` returns the
     * stored one and starts nothing.
     */
    scheduleTurn: rpc<ScheduleTurnInput, ScheduledTurn>({
      name: "schedule_turn",
      parseInput: parseScheduleTurnInput,
      locks: [persistence.scheduledTurns],
      handler: async (context, input) => {
        requireRunningSession(context, "schedule_turn");
        const { next, schedule, added } = addScheduledTurn(await context.read(persistence.scheduledTurns), input, options, context.now(), "client");
        if (added) {
          await context.write(persistence.scheduledTurns, next);
          context.moveTo(AgentStepType.AwaitScheduledTurn, schedule.scheduleId);
        }
        return schedule;
      },
    }),
    /**
     * Removes a schedule; false when there is none of that ID. Its wait is
     * cancelled with the others', which start again in the same commit: the
     * engine cancels executions by Step type, and a run that was committing
     * at that moment is discarded whole, so the restarted wait finds its time
     * passed and runs it then — once.
     */
    cancelScheduledTurn: rpc<CancelScheduledTurnInput, boolean>({
      name: "cancel_scheduled_turn",
      parseInput: parseCancelScheduledTurn,
      locks: [persistence.scheduledTurns],
      handler: async (context, input) => {
        requireRunningSession(context, "cancel_scheduled_turn");
        const stored = await context.read(persistence.scheduledTurns);
        if (stored === undefined || !stored.schedules.some((schedule) => schedule.scheduleId === input.scheduleId)) return false;
        const remaining = stored.schedules.filter((schedule) => schedule.scheduleId !== input.scheduleId);
        await context.write(persistence.scheduledTurns, { ...stored, schedules: remaining });
        context.cancelSteps([AgentStepType.AwaitScheduledTurn]);
        for (const schedule of remaining) context.moveTo(AgentStepType.AwaitScheduledTurn, schedule.scheduleId);
        return true;
      },
    }),
  };
}
