/** `POST /sessions/:id/fork`: a new session from a turn boundary of one the caller owns, owned by the caller too. */
import { FlowAlreadyExistsError } from "@perdure/engine";
import { sessionLineageToWire } from "../../contract/values/session-lineage.ts";
import { forkSession } from "../../session/fork/fork-session.ts";
import type { AgentHttpRoute } from "../agent-http-route.ts";
import { newForkSessionId, readForkSessionRequest } from "../fork-request.ts";
import { httpPrincipalInputKey } from "../session-owner.ts";
import { callerOf, sessionOfPath } from "./session-routes.ts";

/** The largest first message a fork takes, as a chat message. */
const maxForkMessageBytes = 256 * 1024;

export const forkRoutes: readonly AgentHttpRoute[] = [
  {
    method: "POST", path: "/sessions/:id/fork", action: "forkSession", bodyLimit: "chat",
    handle: async (context) => {
      const { sessionId: sourceSessionId, flow } = await sessionOfPath(context);
      const request = readForkSessionRequest(await context.readBody(), maxForkMessageBytes);
      const sessionId = request.sessionId ?? newForkSessionId();
      try {
        const fork = await forkSession(context.options.client, flow, {
          sourceSessionId,
          throughTurn: request.throughTurn,
          sessionId,
          ...(request.initialMessage === undefined ? {} : { initialMessage: request.initialMessage }),
          startInput: { [httpPrincipalInputKey]: callerOf(context).principal },
        });
        return Response.json({ sessionId: fork.sessionId, agent: flow.flowType, created: fork.created, lineage: sessionLineageToWire(fork.lineage) }, { status: fork.created ? 201 : 200 });
      } catch (error) {
        if (!FlowAlreadyExistsError.isInstance(error)) throw error;
        throw new FlowAlreadyExistsError(`session ${sessionId} already exists; choose another ID for the fork, or leave sessionId out for a new one`, { cause: error });
      }
    },
  },
];
