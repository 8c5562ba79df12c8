/** The routes of agents and sessions: list the agents, list and create sessions, read a session, stop it, change its settings. */
import type { ListedSession } from "../../contract/ui-stream/session-inspection.ts";
import { FlowAlreadyExistsError, InvalidInputError, describeValue } from "@perdure/engine";
import { agentSnapshotToWire } from "../../contract/values/agent-snapshot.ts";
import { describeAgentSessionFeatures } from "../../session/create-agent-session-flow.ts";
import { createAgentEventSseResponse } from "../../ui-stream/agent-event-sse.ts";
import { readAgentSessionUIMessages } from "../../ui-stream/agent-ui-messages.ts";
import type { AgentHttpCaller, ResolvedAgentHttpHandlerOptions } from "../agent-http-options.ts";
import type { AgentHttpRoute, AgentHttpRouteContext, OwnedSession } from "../agent-http-route.ts";
import { checkSessionId } from "../request-values.ts";
import { browserSafeSnapshot, inspectSession } from "../session-inspection.ts";
import { checkModelChoice, readSessionSettings, updateSessionSettings } from "../session-settings-route.ts";
import { httpPrincipalInputKey, isOwnedBy } from "../session-owner.ts";

/** The caller of a route that is not public. */
export function callerOf(context: AgentHttpRouteContext): AgentHttpCaller {
  if (context.caller === null) throw new TypeError("a public route asked for its caller");
  return context.caller;
}

/** The session the path's `:id` names, checked and owned by the caller. */
export function sessionOfPath(context: AgentHttpRouteContext): Promise<OwnedSession> {
  return context.ownedSession(checkSessionId(context.params.id));
}


/**
 * The caller's sessions, newest change first, at most `maxListedSessions`.
 * Owners live in each session's start input, so every session of the served
 * agents is looked at; a deployment with very many sessions keeps its own
 * index of who owns what.
 */
async function listOwnedSessions(options: ResolvedAgentHttpHandlerOptions, caller: AgentHttpCaller): Promise<ListedSession[]> {
  const { client } = options;
  const sessions: ListedSession[] = [];
  for (const [flowType, flow] of options.flows) {
    let afterFlowId: string | undefined;
    for (;;) {
      const page = await client.listFlows({ flowType, limit: 500, ...(afterFlowId === undefined ? {} : { afterFlowId }) });
      for (const entry of page) {
        const description = await client.describe(entry.flowId);
        if (!isOwnedBy(options, description, caller)) continue;
        const [state, pendingInterrupts] = await client.getAttributes(entry.flowId, flow.agentState, flow.pendingInterrupts);
        sessions.push({
          sessionId: entry.flowId,
          agent: entry.flowType,
          status: entry.status,
          createdAt: entry.createdAt.toISOString(),
          updatedAt: entry.updatedAt.toISOString(),
          agentStatus: state?.status ?? null,
          turnCount: state?.turnCount ?? 0,
          activeTurnId: state?.activeTurnId ?? null,
          lastTurnError: state?.lastTurnError ?? null,
          pendingApprovals: pendingInterrupts?.filter((interrupt) => interrupt.kind === "approval").length ?? 0,
          pendingQuestions: pendingInterrupts?.filter((interrupt) => interrupt.kind === "question").length ?? 0,
        });
      }
      if (page.length < 500) break;
      afterFlowId = page.at(-1)?.flowId;
    }
  }
  sessions.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
  return sessions.slice(0, options.maxListedSessions);
}

function newSessionId(): string {
  return `session-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

export const sessionRoutes: readonly AgentHttpRoute[] = [
  {
    method: "GET", path: "/health", action: "getHealth", isPublic: true,
    handle: () => Response.json({ ok: true }),
  },
  {
    method: "GET", path: "/agents", action: "listAgents",
    handle: ({ options }) => {
      // `features` says what each agent accepts, so a UI offers "Plan first" only where plan mode is on.
      const features = Object.fromEntries([...options.flows].map(([flowType, flow]) => [flowType, describeAgentSessionFeatures(flow)]));
      return Response.json({ agents: [...options.flows.keys()], features });
    },
  },
  {
    method: "GET", path: "/sessions", action: "listSessions",
    handle: async (context) => Response.json({ sessions: await listOwnedSessions(context.options, callerOf(context)) }),
  },
  {
    method: "POST", path: "/sessions", action: "createSession", bodyLimit: "small",
    handle: async (context) => {
      const { options } = context;
      const body = await context.readBody();
      const agent = body.agent ?? options.defaultFlow.flowType;
      const flow = typeof agent === "string" ? options.flows.get(agent) : undefined;
      if (flow === undefined) {
        const shown = typeof agent === "string" ? JSON.stringify(agent.length > 80 ? `${agent.slice(0, 79)}…` : agent) : describeValue(agent);
        throw new InvalidInputError(`agent ${shown} is not one of ${[...options.flows.keys()].join(", ")}`);
      }
      const sessionId = body.sessionId === undefined ? newSessionId() : checkSessionId(body.sessionId);
      const sessionSettings = readSessionSettings(body);
      if (sessionSettings !== undefined) checkModelChoice(flow, sessionSettings);
      const input = { [httpPrincipalInputKey]: callerOf(context).principal, ...(sessionSettings === undefined ? {} : { session_settings: sessionSettings }) };
      try {
        await options.client.start(flow, sessionId, input);
      } catch (error) {
        if (!FlowAlreadyExistsError.isInstance(error)) throw error;
        throw new FlowAlreadyExistsError(`session ${sessionId} already exists; choose another ID, or leave sessionId out for a new one`, { cause: error });
      }
      return Response.json({ sessionId, agent: flow.flowType }, { status: 201 });
    },
  },
  {
    method: "GET", path: "/sessions/:id/messages", action: "getSessionMessages",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      return Response.json(await readAgentSessionUIMessages({ client: context.options.client, flow, flowId: sessionId }));
    },
  },
  {
    method: "GET", path: "/sessions/:id/snapshot", action: "getSessionSnapshot",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const snapshot = await context.options.client.invokeRPC(flow.getAgentSnapshot, sessionId);
      return Response.json(browserSafeSnapshot(agentSnapshotToWire(snapshot)));
    },
  },
  {
    method: "GET", path: "/sessions/:id/inspect", action: "inspectSession",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      return Response.json(await inspectSession(context.options.client, flow, sessionId, [...context.options.flows.values()]));
    },
  },
  {
    method: "GET", path: "/sessions/:id/events", action: "streamSessionEvents",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const { request, options } = context;
      const resumeToken = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("resumeToken") ?? "";
      return createAgentEventSseResponse({ client: options.client, flow, flowId: sessionId, resumeToken, signal: request.signal, includeWriteTimes: options.includeEventWriteTimes });
    },
  },
  {
    method: "POST", path: "/sessions/:id/settings", action: "updateSessionSettings", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId, flow } = await sessionOfPath(context);
      const settings = readSessionSettings(await context.readBody());
      if (settings === undefined) throw new InvalidInputError("the body needs sessionSettings, an object such as { \"model\": \"gpt-5\" }");
      checkModelChoice(flow, settings);
      return Response.json({ updated: await updateSessionSettings(context.options.client, flow, sessionId, settings) });
    },
  },
  {
    method: "POST", path: "/sessions/:id/stop", action: "stopSession", bodyLimit: "small",
    handle: async (context) => {
      const { sessionId } = await sessionOfPath(context);
      await context.readBody();
      await context.options.client.stop(sessionId, "stopped over the session HTTP API");
      return Response.json({ stopped: true });
    },
  },
];
