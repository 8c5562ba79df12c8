/** The routes of scheduled turns: schedule one (`at` a time or `every` cron match) and cancel one. */
import { scheduledTurnToWire } from "../../contract/values/scheduled-turn.ts";
import { checkScheduleId, type ScheduleTurnInput } from "../../session/schedules/scheduled-turn-requests.ts";
import { personLockConflictRetryMs } from "../../session/rpcs/person-lock-conflict-retry.ts";
import type { AgentHttpRoute } from "../agent-http-route.ts";
import { sessionOfPath } from "./session-routes.ts";

export const scheduleRoutes: readonly AgentHttpRoute[] = [
  {
    method: "POST", path: "/sessions/:id/schedules", action: "scheduleTurn", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const body = await context.readBody();
      // The RPC checks the body (one of at and every, the text, mode, time zone and ID) and names what is wrong.
      const schedule = await context.options.client.invokeRPC(flow.scheduleTurn, sessionId, body as unknown as ScheduleTurnInput, { lockConflictRetryMs: personLockConflictRetryMs });
      return Response.json({ schedule: scheduledTurnToWire(schedule) });
    },
  },
  {
    method: "POST", path: "/sessions/:id/schedules/:scheduleId/cancel", action: "cancelScheduledTurn", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const scheduleId = checkScheduleId(context.params.scheduleId);
      await context.readBody();
      return Response.json({ cancelled: await context.options.client.invokeRPC(flow.cancelScheduledTurn, sessionId, { scheduleId }, { lockConflictRetryMs: personLockConflictRetryMs }) });
    },
  },
];
