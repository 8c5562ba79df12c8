// `@perdure/agents/contract/ui-stream` is bundled into browsers (the perdure dev
// web UI imports its constants): every import it makes at run time must stay
// inside the folder, and nothing may name Node.js or the engine.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const folder = new URL("./", import.meta.url);
const sources = readdirSync(folder).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));

void test("the ui-stream contract's run-time imports stay inside its folder", () => {
  assert.ok(sources.includes("index.ts"));
  for (const name of sources) {
    const text = readFileSync(new URL(name, folder), "utf8");
    for (const match of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)) {
      const [, , typeOnly, specifier] = match;
      if (typeOnly !== undefined) continue;
      assert.match(specifier!, /^\.\/[\w-]+\.ts$/, `${name} imports ${specifier} at run time; a browser bundle would load it`);
    }
  }
});

void test("the ui-stream contract's values are what the server sends", async () => {
  const contract = await import("./index.ts");
  const server = await import("../../ui-stream/index.ts");
  assert.equal(contract.agentResumeTokenHeaderName, server.agentResumeTokenHeaderName);
  assert.equal(contract.agentEventWriteTimesEventName, server.agentEventWriteTimesEventName);
  assert.equal(contract.agentPlanPartId, "agent-plan");
});
