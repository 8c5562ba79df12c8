/**
 * The dev server's HTTP API and web UI as a Hono app. Every request passes,
 * in order: the Host check and, for state-changing routes, the same-origin
 * and content-type guard; CORS for allowed origins; the access check; and a
 * body limit enforced while the body is read. Only then does a route parse
 * anything.
 */
import { describeAgentSessionFeatures, forkSession, sessionLineageToWire, type AgentSessionFlow } from "@perdure/agents";
import { newForkSessionId, readForkSessionRequest } from "@perdure/agents/http";
import {
  agentResumeTokenHeaderName,
  respondToAgentQuestion,
  createAgentEventSseResponse,
  createAgentUIMessageStreamResponse,
  guardAgentRequest,
  readAgentQuestionResponses,
  readAgentSessionUIMessages,
  readAgentToolApprovalResponses,
  resolveAgentToolApprovalsWithUIMessageStream,
  sendAgentUserMessageWithUIMessageStream,
} from "@perdure/agents/ui-stream";
import { FlowAlreadyExistsError, FlowNotFoundError, InvalidInputError, type Client } from "@perdure/engine";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { devAccessMiddleware, type DevAccess } from "./dev-access.ts";
import { answerDevAppError, ForbiddenError } from "./dev-app-errors.ts";
import { checkInterruptId, checkSessionId, readChatRequest, readJsonObject, readPlanRevision, readQuestionResponse, rejectMalformedPath } from "./dev-request-body.ts";
import { executePlanWithRetry } from "./execute-plan.ts";
import { checkModelChoice, readSessionSettings, updateSessionSettings } from "./session-settings.ts";
import { truncateText } from "../format/truncate-text.ts";
import { inspectSession } from "./session-inspection.ts";
import { serveWebUI } from "./serve-web-ui.ts";
import { cancelTurnWithRetry, deleteQueuedMessage, readCancelRequest, readDeleteQueuedRequest, readSteerRequest, steerTurn } from "./turn-control.ts";

/** What a route does to a session, for the authorization hook. */
export type SessionAccess = "read" | "write" | "create" | "list";

/**
 * Decides whether an admitted caller may do `access` on a session (null for
 * the session list). Runs after the access check, once the route knows the
 * session. Throw or return false to refuse (403).
 */
export type AuthorizeRequest = (request: Request, access: SessionAccess, sessionId: string | null) => boolean | Promise<boolean>;

/** Options of {@link createDevApp}. */
export interface DevAppOptions {
  client: Client;
  /** Agent session Flows by Flow type; the first is the default for new sessions. */
  flows: ReadonlyMap<string, AgentSessionFlow>;
  /** Who may call at all: the access token, or loopback callers only. */
  access: DevAccess;
  /** The `Host` header values served; "any" only with an access token. */
  allowedHosts: readonly string[] | "any";
  /**
   * Origins of separate front ends that may call the API (CORS and the
   * same-origin guard admit them).
   * @default []
   */
  allowedOrigins?: readonly string[];
  /** Per-session authorization. @default every admitted caller may do everything */
  authorize?: AuthorizeRequest;
  /** Folder of the built web UI; absent means API only. */
  webRoot?: string;
}

/** The largest body of `POST /api/chat`: one message and its parts (the web UI sends only the last message). */
export const maxChatBodyBytes = 1024 * 1024;
/** The largest body of the other state-changing routes. */
export const maxSmallBodyBytes = 64 * 1024;

function limitBody(maxSize: number): MiddlewareHandler {
  return bodyLimit({ maxSize, onError: (context) => context.json({ error: `request body is over ${maxSize} bytes` }, 413) });
}

/** The dev server's HTTP API and web UI, as a Hono app of Fetch handlers. */
export function createDevApp(options: DevAppOptions): Hono {
  const { client, flows } = options;
  const allowedOrigins = options.allowedOrigins ?? [];
  const app = new Hono();
  const defaultFlow = [...flows.values()][0];

  async function authorize(context: Context, access: SessionAccess, sessionId: string | null): Promise<void> {
    if (options.authorize === undefined) return;
    let isAllowed: boolean;
    try {
      isAllowed = await options.authorize(context.req.raw, access, sessionId);
    } catch {
      isAllowed = false;
    }
    if (!isAllowed) throw new ForbiddenError(`not allowed to ${access} ${sessionId ?? "sessions"}`);
  }

  async function flowOf(sessionId: string): Promise<AgentSessionFlow> {
    const description = await client.describe(sessionId);
    const flow = flows.get(description.flowType);
    if (flow === undefined) throw new FlowNotFoundError(`session ${sessionId} is a ${description.flowType}, which this server does not host`);
    return flow;
  }

  /** The `:id` of the path, checked and authorized. */
  async function sessionOfPath(context: Context, access: SessionAccess): Promise<{ sessionId: string; flow: AgentSessionFlow }> {
    const sessionId = checkSessionId(context.req.param("id"));
    await authorize(context, access, sessionId);
    return { sessionId, flow: await flowOf(sessionId) };
  }

  app.onError(answerDevAppError);
  app.use(async (context, next) => guardAgentRequest(context.req.raw, { allowedHosts: options.allowedHosts, allowedOrigins }) ?? next());
  if (allowedOrigins.length > 0) {
    app.use("/api/*", cors({
      origin: [...allowedOrigins],
      credentials: true,
      allowHeaders: ["content-type", "authorization", agentResumeTokenHeaderName, "last-event-id"],
    }));
  }
  app.use(devAccessMiddleware(options.access));
  app.use(rejectMalformedPath);

  app.get("/api/health", (context) => context.json({ ok: true }));

  app.get("/api/agents", async (context) => {
    await authorize(context, "list", null);
    // `features` says what each agent accepts, so a UI offers "Plan first" only where plan mode is on.
    const features = Object.fromEntries([...flows].map(([flowType, flow]) => [flowType, describeAgentSessionFeatures(flow)]));
    return context.json({ agents: [...flows.keys()], features });
  });

  app.get("/api/sessions", async (context) => {
    await authorize(context, "list", null);
    const sessions = [];
    for (const [flowType, flow] of flows) {
      for (const entry of await client.listFlows({ flowType, limit: 500 })) {
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
    }
    sessions.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
    return context.json({ sessions });
  });

  app.post("/api/sessions", limitBody(maxSmallBodyBytes), async (context) => {
    const body = await readJsonObject(context);
    const agent = body.agent ?? defaultFlow?.flowType;
    const flow = typeof agent === "string" ? flows.get(agent) : undefined;
    if (flow === undefined) throw new InvalidInputError(`agent ${typeof agent === "string" ? JSON.stringify(truncateText(agent, 80)) : "of this type"} is not one of ${[...flows.keys()].join(", ")}`);
    const sessionId = body.sessionId === undefined ? `session-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}` : checkSessionId(body.sessionId);
    await authorize(context, "create", sessionId);
    const sessionSettings = readSessionSettings(body);
    if (sessionSettings !== undefined) checkModelChoice(flow, sessionSettings);
    try {
      await client.start(flow, sessionId, sessionSettings === undefined ? {} : { session_settings: sessionSettings });
    } catch (error) {
      if (!FlowAlreadyExistsError.isInstance(error)) throw error;
      throw new FlowAlreadyExistsError(`session ${sessionId} already exists; choose another ID, or leave sessionId out for a new one`, { cause: error });
    }
    return context.json({ sessionId, agent: flow.flowType }, 201);
  });

  app.get("/api/chat/:id", async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "read");
    return context.json(await readAgentSessionUIMessages({ client, flow, flowId: sessionId }));
  });

  app.post("/api/chat", limitBody(maxChatBodyBytes), async (context) => {
    const { sessionId, message } = readChatRequest(await readJsonObject(context));
    await authorize(context, "write", sessionId);
    const flow = await flowOf(sessionId);
    const signal = context.req.raw.signal;
    if (message.role === "assistant") {
      return resolveAgentToolApprovalsWithUIMessageStream({
        client, flow, flowId: sessionId, signal,
        approvals: readAgentToolApprovalResponses(message.message),
        questionResponses: readAgentQuestionResponses(message.message),
      });
    }
    return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: sessionId, text: message.text, planMode: message.planMode, messageId: message.messageId as string | undefined, signal });
  });

  app.get("/api/chat/:id/stream", async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "read");
    const resumeToken = context.req.header(agentResumeTokenHeaderName);
    return createAgentUIMessageStreamResponse({ client, flow, flowId: sessionId, signal: context.req.raw.signal, ...(resumeToken === undefined ? {} : { resumeToken }) });
  });

  app.get("/api/sessions/:id/inspect", async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "read");
    return context.json(await inspectSession(client, flow, sessionId));
  });

  app.get("/api/sessions/:id/events", async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "read");
    const resumeToken = context.req.header("last-event-id") ?? context.req.query("resumeToken") ?? "";
    // The Events tab shows when each event was written; the times travel beside the contract's events.
    return createAgentEventSseResponse({ client, flow, flowId: sessionId, resumeToken, signal: context.req.raw.signal, includeWriteTimes: true });
  });

  app.post("/api/sessions/:id/plan/execute", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const revision = readPlanRevision(await readJsonObject(context));
    return context.json({ executed: await executePlanWithRetry(client, flow, sessionId, revision) });
  });

  app.post("/api/sessions/:id/questions/:interruptId", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const interruptId = checkInterruptId(context.req.param("interruptId"));
    const response = readQuestionResponse(await readJsonObject(context));
    // A refusal says why: the question closed, or the answer is blank or not one of its choices.
    return context.json(await respondToAgentQuestion({ client, flow, flowId: sessionId, interruptId, ...response }));
  });

  app.post("/api/sessions/:id/steer", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const request = readSteerRequest(await readJsonObject(context));
    return context.json({ steered: await steerTurn(client, flow, sessionId, request) });
  });

  app.post("/api/sessions/:id/queue/delete", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const { messageId } = readDeleteQueuedRequest(await readJsonObject(context));
    return context.json({ deleted: await deleteQueuedMessage(client, flow, sessionId, messageId) });
  });

  app.post("/api/sessions/:id/cancel", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const { turnId } = readCancelRequest(await readJsonObject(context));
    return context.json({ cancelled: await cancelTurnWithRetry(client, flow, sessionId, turnId) });
  });

  app.post("/api/sessions/:id/settings", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId, flow } = await sessionOfPath(context, "write");
    const settings = readSessionSettings(await readJsonObject(context));
    if (settings === undefined) throw new InvalidInputError("the body needs sessionSettings, an object such as { \"model\": \"gpt-5\" }");
    checkModelChoice(flow, settings);
    return context.json({ updated: await updateSessionSettings(client, flow, sessionId, settings) });
  });

  // A fork reads its source and creates a session: both accesses are checked.
  app.post("/api/sessions/:id/fork", limitBody(maxChatBodyBytes), async (context) => {
    const { sessionId: sourceSessionId, flow } = await sessionOfPath(context, "read");
    const request = readForkSessionRequest(await readJsonObject(context), maxChatBodyBytes);
    const sessionId = request.sessionId ?? newForkSessionId();
    await authorize(context, "create", sessionId);
    try {
      const fork = await forkSession(client, flow, {
        sourceSessionId,
        throughTurn: request.throughTurn,
        sessionId,
        ...(request.initialMessage === undefined ? {} : { initialMessage: request.initialMessage }),
      });
      return context.json({ sessionId: fork.sessionId, agent: flow.flowType, created: fork.created, lineage: sessionLineageToWire(fork.lineage) }, fork.created ? 201 : 200);
    } catch (error) {
      if (!FlowAlreadyExistsError.isInstance(error)) throw error;
      throw new FlowAlreadyExistsError(`session ${sessionId} already exists; choose another ID for the fork, or leave sessionId out for a new one`, { cause: error });
    }
  });

  app.post("/api/sessions/:id/stop", limitBody(maxSmallBodyBytes), async (context) => {
    const { sessionId } = await sessionOfPath(context, "write");
    await readJsonObject(context);
    await client.stop(sessionId, "stopped from the dev server");
    return context.json({ stopped: true });
  });

  app.all("/api/*", (context) => context.json({ error: `no route ${context.req.method} ${truncateText(new URL(context.req.url).pathname, 200)}` }, 404));
  if (options.webRoot !== undefined) serveWebUI(app, options.webRoot);
  return app;
}
