/** The routes that decide an approval, answer a question, approve a plan, and steer, trim and stop the running turn. */
import { respondToAgentQuestion } from "../../ui-stream/agent-question-responses.ts";
import type { AgentHttpRoute } from "../agent-http-route.ts";
import { decideApproval } from "../approval-decision.ts";
import { checkInterruptId, readApprovalDecision, readPlanRevision, readQuestionResponse } from "../request-values.ts";
import { cancelTurnWithRetry, deleteQueuedMessage, executePlanWithRetry, readCancelRequest, readDeleteQueuedRequest, readSteerRequest, steerTurn } from "../turn-control.ts";
import { sessionOfPath } from "./session-routes.ts";

export const turnControlRoutes: readonly AgentHttpRoute[] = [
  {
    method: "POST", path: "/sessions/:id/approvals/:interruptId", action: "decideApproval", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const interruptId = checkInterruptId(context.params.interruptId);
      const decision = readApprovalDecision(await context.readBody());
      await decideApproval(context.options.client, flow, sessionId, interruptId, decision);
      return Response.json({ decided: true, approved: decision.approved });
    },
  },
  {
    method: "POST", path: "/sessions/:id/questions/:interruptId", action: "answerQuestion", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const interruptId = checkInterruptId(context.params.interruptId);
      const response = readQuestionResponse(await context.readBody());
      // A refusal says why: the question closed, or the answer is blank or not one of its choices.
      return Response.json(await respondToAgentQuestion({ client: context.options.client, flow, flowId: sessionId, interruptId, ...response }));
    },
  },
  {
    method: "POST", path: "/sessions/:id/plan/execute", action: "executePlan", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const revision = readPlanRevision(await context.readBody());
      return Response.json({ executed: await executePlanWithRetry(context.options.client, flow, sessionId, revision) });
    },
  },
  {
    method: "POST", path: "/sessions/:id/steer", action: "steerTurn", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const request = readSteerRequest(await context.readBody());
      return Response.json({ steered: await steerTurn(context.options.client, flow, sessionId, request) });
    },
  },
  {
    method: "POST", path: "/sessions/:id/queue/delete", action: "deleteQueuedMessage", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const { messageId } = readDeleteQueuedRequest(await context.readBody());
      return Response.json({ deleted: await deleteQueuedMessage(context.options.client, flow, sessionId, messageId) });
    },
  },
  {
    method: "POST", path: "/sessions/:id/cancel", action: "cancelTurn", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const { turnId } = readCancelRequest(await context.readBody());
      return Response.json({ cancelled: await cancelTurnWithRetry(context.options.client, flow, sessionId, turnId) });
    },
  },
];
