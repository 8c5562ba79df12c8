/**
 * Small calls to a running `perdure dev` for the integration tests.
 */
import assert from "node:assert/strict";
import { pollUntil } from "@perdure/agents/testing";
import { sendRaw } from "./raw-http.ts";

/** The content type every state-changing route takes. */
export const json = { "content-type": "application/json" };

/** Waits until the session waits for a user message with nothing else to commit. */
export async function waitUntilIdle(origin: string, sessionId: string, headers: Record<string, string> = {}): Promise<void> {
  await pollUntil(async () => {
    const response = await sendRaw(origin, { method: "GET", path: `/api/sessions/${sessionId}/inspect`, headers });
    const inspection = JSON.parse(response.body) as { activeExecutions: { stepType: string; status: string }[] };
    return inspection.activeExecutions.length === 1 && inspection.activeExecutions[0]?.stepType === "AwaitUserMessage" && inspection.activeExecutions[0].status === "waiting";
  }, { timeoutMs: 20_000, description: `session ${sessionId} waiting for a message` });
}

/** Creates a session and waits until it waits for its first message. */
export async function createSession(origin: string, sessionId: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await sendRaw(origin, { method: "POST", path: "/api/sessions", headers: { ...json, ...headers }, body: JSON.stringify({ sessionId }) });
  assert.equal(response.status, 201, response.body);
  await waitUntilIdle(origin, sessionId, headers);
}

