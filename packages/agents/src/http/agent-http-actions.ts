/**
 * The operations of the session HTTP API, one per route. Each name is the
 * route's `operationId` in the OpenAPI document and the `action` that
 * `authorize` is asked about.
 */
export const agentHttpActions = [
  "getHealth",
  "getLiveness",
  "getReadiness",
  "getOpenApiDocument",
  "listAgents",
  "listSessions",
  "createSession",
  "getSessionMessages",
  "getSessionSnapshot",
  "inspectSession",
  "streamSessionEvents",
  "getChatMessages",
  "sendChatMessage",
  "resumeChatStream",
  "decideApproval",
  "answerQuestion",
  "executePlan",
  "steerTurn",
  "deleteQueuedMessage",
  "cancelTurn",
  "updateSessionSettings",
  "stopSession",
  "forkSession",
  "scheduleTurn",
  "cancelScheduledTurn",
] as const;

/** One operation of the session HTTP API. */
export type AgentHttpAction = (typeof agentHttpActions)[number];
