/**
 * `perdure export <sessionId>`: the session as a fixture (JSON), or with
 * `--as-test` as a `node:test` file that replays it against the entry
 * module's agent and fails on the first divergence.
 */
import { dirname, relative, resolve } from "node:path";
import { exportSession, type AgentSessionFlow, type SessionFixture } from "@perdure/agents";
import { FlowNotFoundError, type Client } from "@perdure/engine";

/** What `perdure export` writes. */
export interface ExportCommandOptions {
  sessionId: string;
  /** Where the output goes, for the test's import path; undefined for stdout (paths then start at the working folder). */
  outPath: string | undefined;
  /** The entry module the test imports the agent from. */
  entryPath: string;
  asTest: boolean;
  /** Names the store in "no session" errors. */
  storeDescription: string;
}

/** An import specifier of `entryPath` from a file in `fromFolder`. */
function importSpecifier(fromFolder: string, entryPath: string): string {
  const path = relative(fromFolder, resolve(entryPath)).split("\\").join("/");
  return path.startsWith(".") ? path : `./${path}`;
}

/** A `node:test` file that replays `fixture` against the entry's Flow of its type. */
export function formatReplayTest(fixture: SessionFixture, entrySpecifier: string): string {
  return `// Replays session ${fixture.session_id} (exported ${fixture.exported_at}) against today's agent code.
// Written by \`perdure export --as-test\`; the test fails when the agent's model requests, model calls or tool calls
// part from the recording. Run it with node --test.
import assert from "node:assert/strict";
import { test } from "node:test";
import { replaySession } from "@perdure/agents/testing";
import * as agents from ${JSON.stringify(entrySpecifier)};

const fixture = ${JSON.stringify(fixture, null, 2)};

test(${JSON.stringify(`session ${fixture.session_id} replays without divergence`)}, async () => {
  const flow = Object.values(agents).find((value) => (value as { flowType?: unknown } | null)?.flowType === fixture.flow_type);
  assert.ok(flow !== undefined, \`the entry module exports no Flow of type \${fixture.flow_type}\`);
  const report = await replaySession(fixture, { flow: flow as never });
  assert.equal(report.divergence, null, report.divergence?.diff);
});
`;
}

/** Runs `perdure export`; returns the text to write. */
export async function runExportCommand(client: Client, flows: ReadonlyMap<string, AgentSessionFlow>, options: ExportCommandOptions): Promise<string> {
  let flowType: string;
  try {
    flowType = (await client.describe(options.sessionId)).flowType;
  } catch (error) {
    if (FlowNotFoundError.isInstance(error)) throw new Error(`no session ${JSON.stringify(options.sessionId)} in ${options.storeDescription}; perdure sessions lists them`, { cause: error });
    throw error;
  }
  const flow = flows.get(flowType);
  if (flow === undefined) throw new Error(`session ${options.sessionId} is a ${flowType}, which the entry module does not export`);
  const fixture = await exportSession(client, flow, options.sessionId);
  if (!options.asTest) return `${JSON.stringify(fixture, null, 2)}\n`;
  const folder = options.outPath === undefined ? process.cwd() : dirname(resolve(options.outPath));
  return formatReplayTest(fixture, importSpecifier(folder, options.entryPath));
}
