/** Reads every Attribute and map instance of a session on one view, for tests that prove a session unchanged. */
import type { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "../../create-agent-session-flow.ts";

export async function readEverySessionAttribute(client: Client, flow: AgentSessionFlow, sessionId: string): Promise<Record<string, unknown>> {
  return client.readFlowState(sessionId, async (reader) => {
    const values: Record<string, unknown> = {};
    for (const definition of flow.persistenceByName.values()) {
      if (definition.kind === "attribute") values[definition.name] = await reader.get(definition);
      if (definition.kind === "attribute_map") values[definition.name] = await reader.list(definition);
    }
    return values;
  });
}
