/**
 * The OpenAPI 3.1 document of the session HTTP API, written by hand so that
 * it says what each route means; a test checks it against the route table,
 * so neither can change without the other.
 */

type JsonSchema = Record<string, unknown>;

const errorBody: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string", description: "What is wrong, naming the bad value, and what to do." } },
};

function errorResponse(description: string): JsonSchema {
  return { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
}

/** Answers every route may give besides its own. */
const readinessBody: JsonSchema = {
  type: "object",
  required: ["ready", "checks"],
  properties: { ready: { type: "boolean" }, checks: { type: "object", additionalProperties: { type: "string" }, description: "store, schema and worker: ok or a short reason" } },
};

const commonErrors = {
  "400": errorResponse("Bad input: a malformed path, body or value; the message names it."),
  "403": errorResponse("A state-changing request from another web page (its origin is not allowed)."),
  "413": errorResponse("The body is over the route's limit; nothing of it was used."),
  "415": errorResponse("A state-changing request whose content type is not application/json."),
  "421": errorResponse("A Host header this server does not answer to."),
};

function jsonResponse(description: string, schema: JsonSchema): JsonSchema {
  return { description, content: { "application/json": { schema } } };
}

function jsonBody(schema: JsonSchema, description?: string): JsonSchema {
  return { required: true, ...(description === undefined ? {} : { description }), content: { "application/json": { schema } } };
}

const sessionIdParameter = {
  name: "id", in: "path", required: true,
  description: "The session ID: 1 to 128 letters, digits, \".\", \"_\", \":\" or \"-\", starting with a letter or digit.",
  schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$" },
};

const interruptIdParameter = {
  name: "interruptId", in: "path", required: true,
  description: "The interrupt_id of a pending approval or question, as the session's snapshot lists it.",
  schema: { type: "string", minLength: 1, maxLength: 512 },
};

const notFound = errorResponse("No such session for this caller: it does not exist, or another principal owns it (the two answer alike).");
const conflict = errorResponse("The session is stopped, or a decision races a running Step; read the session again.");

function sessionOperation(operationId: string, summary: string, responses: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { parameters = [], ...rest } = extra as { parameters?: unknown[] };
  return { operationId, summary, security: [{ caller: [] }], parameters: [sessionIdParameter, ...parameters], ...rest, responses: { ...responses, "404": notFound, ...commonErrors } };
}

function booleanAnswer(name: string, description: string): JsonSchema {
  return jsonResponse(description, { type: "object", required: [name], properties: { [name]: { type: "boolean" } } });
}

const sseResponse = (description: string): JsonSchema => ({ description, content: { "text/event-stream": { schema: { type: "string" } } } });

/**
 * The document for a handler mounted at `basePath`.
 *
 * @example
 * const document = agentHttpOpenApiDocument("/api");
 * document.paths["/sessions"].post.operationId; // "createSession"
 */
export function agentHttpOpenApiDocument(basePath: string): { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> } & Record<string, unknown> {
  const emptyObjectBody = jsonBody({ type: "object" }, "An empty JSON object, {}.");
  return {
    openapi: "3.1.0",
    info: {
      title: "Perdure session HTTP API",
      version: "1",
      description: "Durable agent sessions over HTTP: create and list sessions, chat through the AI SDK's useChat with resume, plain Server-Sent Events, snapshots, approvals, questions, plans and turn control. Every session belongs to the principal that created it.",
    },
    servers: [{ url: basePath === "" ? "/" : basePath }],
    components: {
      schemas: { Error: errorBody },
      securitySchemes: { caller: { type: "http", scheme: "bearer", description: "Whatever the application's authorize function checks: a bearer token, a session cookie, or nothing on a loopback-only server." } },
    },
    paths: {
      "/health": {
        get: { operationId: "getHealth", summary: "Whether the handler answers; public.", responses: { "200": jsonResponse("It answers.", { type: "object", properties: { ok: { const: true } } }), ...commonErrors } },
      },
      "/healthz": {
        get: { operationId: "getLiveness", summary: "A liveness probe: the process answers; public.", responses: { "200": { description: "It answers.", content: { "text/plain": { schema: { type: "string" } } } }, ...commonErrors } },
      },
      "/readyz": {
        get: {
          operationId: "getReadiness", summary: "A readiness probe: the store answers, its schema is migrated, and the attached Worker (if any) is claiming; public, without details.",
          responses: {
            "200": jsonResponse("Ready.", readinessBody),
            "503": jsonResponse("Not ready: the failed checks are named.", readinessBody),
            ...commonErrors,
          },
        },
      },
      "/openapi.json": {
        get: { operationId: "getOpenApiDocument", summary: "This document; public.", responses: { "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }), ...commonErrors } },
      },
      "/agents": {
        get: {
          operationId: "listAgents", summary: "The agents served, by Flow type, with what each accepts (plan mode, built-in tools, model choices).", security: [{ caller: [] }],
          responses: { "200": jsonResponse("The agents.", { type: "object", required: ["agents", "features"], properties: { agents: { type: "array", items: { type: "string" } }, features: { type: "object" } } }), ...commonErrors },
        },
      },
      "/sessions": {
        get: {
          operationId: "listSessions", summary: "The caller's sessions, newest change first; never another principal's.", security: [{ caller: [] }],
          responses: { "200": jsonResponse("The sessions.", { type: "object", required: ["sessions"], properties: { sessions: { type: "array", items: { type: "object", required: ["sessionId", "agent", "status"], properties: { sessionId: { type: "string" }, agent: { type: "string" }, status: { type: "string" }, createdAt: { type: "string" }, updatedAt: { type: "string" }, agentStatus: { type: ["string", "null"] }, turnCount: { type: "integer" }, activeTurnId: { type: ["string", "null"] }, pendingApprovals: { type: "integer" }, pendingQuestions: { type: "integer" } } } } } }), ...commonErrors },
        },
        post: {
          operationId: "createSession", summary: "Starts a session owned by the caller.", security: [{ caller: [] }],
          requestBody: jsonBody({ type: "object", properties: { agent: { type: "string", description: "The agent's Flow type; the first agent when absent." }, sessionId: { type: "string", description: "The new session's ID; a fresh one when absent." }, sessionSettings: { type: "object", description: "Settings such as { \"model\": \"gpt-5\" }." } } }),
          responses: { "201": jsonResponse("Started.", { type: "object", required: ["sessionId", "agent"], properties: { sessionId: { type: "string" }, agent: { type: "string" } } }), "409": errorResponse("A session with this ID exists already."), ...commonErrors },
        },
      },
      "/sessions/{id}/messages": {
        get: sessionOperation("getSessionMessages", "The session's messages as AI SDK UIMessage objects, with the resume token of the active turn's stream.", { "200": jsonResponse("The messages.", { type: "object", required: ["messages"], properties: { messages: { type: "array", items: { type: "object" } }, resumeToken: { type: ["string", "null"] } } }) }),
      },
      "/sessions/{id}/snapshot": {
        get: sessionOperation("getSessionSnapshot", "The session's snapshot as contract wire JSON (state, messages, tool calls, pending interrupts, usage, plan), without what only its Steps use.", { "200": jsonResponse("The snapshot.", { type: "object", required: ["state", "messages", "tool_calls", "pending_interrupts"] }) }),
      },
      "/sessions/{id}/inspect": {
        get: sessionOperation("inspectSession", "The session for an inspector: Flow status, Step timeline, snapshot, features, message storage, the fork's source (lineage) and the session's forks.", { "200": jsonResponse("The inspection.", { type: "object", required: ["flowId", "timeline", "snapshot"] }) }),
      },
      "/sessions/{id}/events": {
        get: sessionOperation("streamSessionEvents", "The session's AgentEvents as Server-Sent Events; each id is a resume token, sent back as Last-Event-ID (or ?resumeToken=).", { "200": sseResponse("The events, live.") }, {
          parameters: [{ name: "resumeToken", in: "query", required: false, schema: { type: "string" } }, { name: "last-event-id", in: "header", required: false, schema: { type: "string" } }],
        }),
      },
      "/sessions/{id}/approvals/{interruptId}": {
        post: sessionOperation("decideApproval", "Approves or rejects a tool call's pending approval, without useChat.", {
          "200": jsonResponse("The session took the decision.", { type: "object", required: ["decided", "approved"], properties: { decided: { const: true }, approved: { type: "boolean" } } }),
          "409": errorResponse("Not pending: decided already, its turn ended, the ID is a question's, or the session is stopped."),
        }, {
          parameters: [interruptIdParameter],
          requestBody: jsonBody({ type: "object", required: ["approved"], properties: { approved: { type: "boolean" }, reason: { type: "string", description: "What the model sees when the call is rejected." } } }),
        }),
      },
      "/sessions/{id}/questions/{interruptId}": {
        post: sessionOperation("answerQuestion", "Answers or declines a pending question; a refusal says why.", {
          "200": jsonResponse("Whether the session took the response.", { type: "object", required: ["answered"], properties: { answered: { type: "boolean" }, reason: { type: "string" } } }),
          "409": conflict,
        }, {
          parameters: [interruptIdParameter],
          requestBody: jsonBody({ oneOf: [{ type: "object", required: ["answer"], properties: { answer: { type: "string" } } }, { type: "object", required: ["declined"], properties: { declined: { const: true }, reason: { type: "string" } } }] }),
        }),
      },
      "/sessions/{id}/plan/execute": {
        post: sessionOperation("executePlan", "Approves the plan revision the person saw; the executing turn starts.", { "200": booleanAnswer("executed", "Whether the session took the approval."), "409": conflict }, {
          requestBody: jsonBody({ type: "object", required: ["revision"], properties: { revision: { type: "integer", minimum: 1 } } }),
        }),
      },
      "/sessions/{id}/steer": {
        post: sessionOperation("steerTurn", "Steers the running turn with a queued message or new text.", { "200": booleanAnswer("steered", "Whether the session took it."), "409": conflict }, {
          requestBody: jsonBody({ oneOf: [{ type: "object", required: ["messageId"], properties: { messageId: { type: "string" } } }, { type: "object", required: ["text"], properties: { text: { type: "string" }, planMode: { type: "boolean" } } }] }),
        }),
      },
      "/sessions/{id}/queue/delete": {
        post: sessionOperation("deleteQueuedMessage", "Deletes a queued message.", { "200": booleanAnswer("deleted", "Whether it was still queued."), "409": conflict }, {
          requestBody: jsonBody({ type: "object", required: ["messageId"], properties: { messageId: { type: "string" } } }),
        }),
      },
      "/sessions/{id}/cancel": {
        post: sessionOperation("cancelTurn", "Stops the active turn (or turnId, when it is the active one).", { "200": booleanAnswer("cancelled", "Whether the request is recorded."), "409": conflict }, {
          requestBody: jsonBody({ type: "object", properties: { turnId: { type: ["string", "null"], pattern: "^turn-[1-9][0-9]*$" } } }),
        }),
      },
      "/sessions/{id}/settings": {
        post: sessionOperation("updateSessionSettings", "Replaces the session's settings; its next turn starts with them.", { "200": booleanAnswer("updated", "Whether the session took them."), "409": conflict }, {
          requestBody: jsonBody({ type: "object", required: ["sessionSettings"], properties: { sessionSettings: { type: "object" } } }),
        }),
      },
      "/sessions/{id}/fork": {
        post: sessionOperation("forkSession", "Starts a new session, owned by the caller, holding this one as it was after throughTurn turns: its transcript, settings, plan and summary, and its turns' tool records marked inherited. Nothing runs again; the source is unchanged. With initialMessage the fork's first turn starts with it (edit and resend, retry).", {
          "201": jsonResponse("The fork.", {
            type: "object", required: ["sessionId", "agent", "created", "lineage"],
            properties: {
              sessionId: { type: "string" }, agent: { type: "string" }, created: { type: "boolean" },
              lineage: { type: "object", properties: { source_session_id: { type: "string" }, through_turn: { type: "integer" }, inherited_message_count: { type: "integer" }, forked_at: { type: "string" } } },
            },
          }),
          "200": jsonResponse("The same fork asked again (same ID, source, turn and message): nothing new was made.", { type: "object" }),
          "409": errorResponse("A session with the requested fork ID already exists."),
        }, {
          requestBody: jsonBody({
            type: "object", required: ["throughTurn"],
            properties: {
              throughTurn: { type: "integer", minimum: 0, description: "How many of the source's turns the fork keeps; turn n's user message is edited by forking through n - 1." },
              initialMessage: { type: "string", description: "The fork's first message." },
              sessionId: { type: "string", description: "The fork's ID; a new one when absent." },
            },
          }),
        }),
      },
      "/sessions/{id}/schedules": {
        post: sessionOperation("scheduleTurn", "Schedules a user message the session queues by itself, on the store's clock: once at a time, or every time a cron expression matches. A run due while a turn runs is queued like any message; runs missed while no Worker ran are one catch-up run. The snapshot lists the schedules as scheduled_turns.", {
          "200": jsonResponse("The stored schedule (the same one when the same request with the same scheduleId came before).", { type: "object", required: ["schedule"], properties: { schedule: { type: "object", required: ["schedule_id", "text", "mode", "next_run_at"], properties: { schedule_id: { type: "string" }, text: { type: "string" }, mode: { enum: ["chat", "planning"] }, at: { type: ["string", "null"] }, every: { type: ["string", "null"] }, timezone: { type: "string" }, next_run_at: { type: "string" }, run_count: { type: "integer" }, skipped_count: { type: "integer" }, last_run_at: { type: ["string", "null"] }, created_at: { type: "string" }, created_by: { enum: ["client", "agent"] } } } } }),
          "409": conflict,
        }, {
          requestBody: jsonBody({
            type: "object", required: ["text"],
            properties: {
              text: { type: "string", description: "The user message each run queues." },
              at: { type: ["string", "integer"], description: "One run at this time: ISO 8601 text or epoch milliseconds. Give at or every, not both." },
              every: { type: "string", description: "A cron expression: 5 fields (minute hour day month weekday), or 6 with seconds first." },
              timezone: { type: "string", description: "The IANA time zone every reads in; UTC when absent." },
              mode: { enum: ["chat", "planning"], description: "planning queues a planMode message; chat when absent." },
              scheduleId: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$", description: "The schedule's ID, so a retried request adds nothing; schedule-<n> when absent." },
            },
          }),
        }),
      },
      "/sessions/{id}/schedules/{scheduleId}/cancel": {
        post: sessionOperation("cancelScheduledTurn", "Cancels a schedule; a message one of its runs queued already stays queued.", { "200": booleanAnswer("cancelled", "Whether the session had the schedule."), "409": conflict }, {
          parameters: [{ name: "scheduleId", in: "path", required: true, description: "The schedule_id the snapshot lists.", schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$" } }],
          requestBody: emptyObjectBody,
        }),
      },
      "/sessions/{id}/stop": {
        post: sessionOperation("stopSession", "Stops the session for good.", { "200": booleanAnswer("stopped", "Stopped.") }, { requestBody: emptyObjectBody }),
      },
      "/chat": {
        post: {
          operationId: "sendChatMessage", summary: "useChat's send: a user message starts or queues a turn; an assistant message (ID turn-<n>-assistant) carries approval decisions and question answers. Answers with the turn's AI SDK UI message stream.", security: [{ caller: [] }],
          requestBody: jsonBody({ type: "object", required: ["id", "messages"], properties: { id: { type: "string", description: "The session ID." }, messages: { type: "array", minItems: 1, items: { type: "object" }, description: "Only the last message is read." }, planMode: { type: "boolean" } } }),
          responses: { "200": sseResponse("The turn as an AI SDK UI message stream (x-vercel-ai-ui-message-stream: v1)."), "404": notFound, "409": conflict, ...commonErrors },
        },
      },
      "/chat/{id}": {
        get: sessionOperation("getChatMessages", "useChat's initial messages: the same as GET /sessions/{id}/messages.", { "200": jsonResponse("The messages.", { type: "object", required: ["messages"] }) }),
      },
      "/chat/{id}/stream": {
        get: sessionOperation("resumeChatStream", "useChat's resume: the active turn's stream from the resume token, or 204 when no turn runs.", { "200": sseResponse("The rest of the turn."), "204": { description: "No turn to resume." } }, {
          parameters: [{ name: "x-agent-resume-token", in: "header", required: false, schema: { type: "string" } }],
        }),
      },
    },
  };
}
