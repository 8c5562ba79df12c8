import assert from "node:assert/strict";
import { test } from "node:test";
import { runMixedFlows } from "../testing/one-request-fixtures/mixed-flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** The rows of every engine table, ordered, with times and worker IDs left out: what both paths must agree on. */
/** The rows a run leaves, compared between the two paths. */
const comparedRows = {
  flows: `SELECT flow_id, flow_type, status, input, output, error, request_id, next_seq FROM flows ORDER BY flow_id`,
  executions: `SELECT flow_id, execution_id, seq, step_type, input, status, attempt, execute_claims, conditions, wait_result, movement_options FROM executions ORDER BY flow_id, seq`,
  attributes: `SELECT flow_id, name, key, value FROM attributes ORDER BY flow_id, name, key`,
  history: `SELECT flow_id, seq, execution_id, step_type, method, status, attempt, outcome, error FROM history ORDER BY flow_id, seq`,
  locks: `SELECT * FROM locks ORDER BY flow_id, name`,
  // Message IDs and publish times hold the commit time; the sequence number and the rest do not.
  messages: `SELECT flow_id, seq, channel, key, value FROM messages ORDER BY flow_id, seq`,
  timers: `SELECT flow_id, execution_id, timer_id, fired FROM timers ORDER BY flow_id, execution_id, timer_id`,
  streamHeads: `SELECT * FROM stream_heads ORDER BY flow_id, stream`,
  // Which Progress messages the Flow type's budget kept depends on how the three Flows' attempts
  // interleave, which timing decides on either path: the untrimmed Countdown Stream is compared row
  // for row, and each path's Progress rows against its own byte count (progressTrim).
  streamMessages: `SELECT flow_id, flow_type, stream, idx, value, bytes FROM stream_messages WHERE stream <> 'Progress' ORDER BY flow_id, stream, idx`,
  streamUsage: `SELECT * FROM stream_usage WHERE stream <> 'Progress' ORDER BY flow_type, stream`,
  progressTrim: `SELECT (SELECT bytes FROM stream_usage WHERE stream = 'Progress') AS counted,
    (SELECT coalesce(sum(bytes), 0) FROM stream_messages WHERE stream = 'Progress') AS kept,
    (SELECT count(*) FROM stream_messages WHERE stream = 'Progress') AS messages`,
};

async function runOnSchema(oneRequest: boolean): Promise<{ rows: Record<string, unknown[]>; dispose: () => Promise<void>; usedOneRequest: boolean; stoppedClaims: number; waitCommits: number; publishCommits: number; waitResults: string[]; selectionsInClaims: number }> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  const usedOneRequest = store.oneRequest !== undefined && oneRequest;
  if (!oneRequest) store.oneRequest = undefined;
  // Claims that stopped at a task the one-request claim could not take (the general path claimed it then).
  let stoppedClaims = 0;
  // Commits of a wait with conditions, and with publishes, that the store applied in one request (migration 0009).
  let waitCommits = 0;
  let publishCommits = 0;
  // Claims whose selection the store read in the claim (migration 0010).
  let selectionsInClaims = 0;
  // The wait results of the executions the one-request claims took, as stored.
  const waitResults: string[] = [];
  const noteWaitResults = (claims: readonly { execution: { waitResult: string | null }; selection?: unknown }[]): void => {
    for (const { execution } of claims) if (execution.waitResult !== null) waitResults.push(execution.waitResult);
    for (const claim of claims) if (claim.selection !== undefined) selectionsInClaims += 1;
  };
  const operations = store.oneRequest;
  if (operations !== undefined) {
    const commitStep = operations.commitStep.bind(operations);
    const claimTasks = operations.claimTasks.bind(operations);
    operations.commitStep = async (commit) => {
      const reply = await commitStep(commit);
      if (reply.claimStopped) stoppedClaims += 1;
      if (reply.outcome === "committed" && (commit.wait ?? null) !== null) waitCommits += 1;
      if (reply.outcome === "committed" && (commit.publishes?.length ?? 0) > 0) publishCommits += 1;
      noteWaitResults(reply.claims);
      return reply;
    };
    operations.claimTasks = async (claim) => {
      const reply = await claimTasks(claim);
      if (reply.claimStopped) stoppedClaims += 1;
      noteWaitResults(reply.claims);
      return reply;
    };
  }
  await runMixedFlows(store);
  return { rows: await temporary.rows(comparedRows), dispose: () => temporary.dispose(), usedOneRequest, stoppedClaims, waitCommits, publishCommits, waitResults, selectionsInClaims };
}

void test("Step commits, starts, Stream appends and heartbeats in one request leave exactly the rows the transactional path leaves", { skip, timeout: 300_000 }, async (t) => {
  const general = await runOnSchema(false);
  t.after(() => general.dispose());
  const oneRequest = await runOnSchema(true);
  t.after(() => oneRequest.dispose());
  assert.equal(general.usedOneRequest, false);
  assert.equal(oneRequest.usedOneRequest, true);
  assert.equal(general.rows["history"]!.length > 80, true, "the scenario committed the Steps it was meant to");
  assert.equal(general.rows["streamHeads"]!.length, 6, "every Flow wrote its two Streams");
  // Each Count attempt writes one message to each Stream, in one batch. The budget of 400 bytes kept
  // fewer Progress messages than Countdown's, and the byte count is exactly the bytes kept, on both paths.
  const countdownMessages = general.rows["streamMessages"]!.length;
  assert.ok(countdownMessages > 70, "the Countdown Stream kept every message");
  const trims = [general, oneRequest].map((run) => run.rows["progressTrim"]![0] as { counted: number; kept: number; messages: number });
  for (const trim of trims) {
    assert.equal(Number(trim.counted), Number(trim.kept), "the Progress byte count is the bytes of the messages kept");
    assert.ok(Number(trim.kept) <= 400 && Number(trim.messages) < countdownMessages, `the Progress budget trimmed old messages: ${JSON.stringify(trim)}`);
  }
  const comparable = (rows: Record<string, unknown[]>): Record<string, unknown[]> => Object.fromEntries(Object.entries(rows).filter(([name]) => name !== "progressTrim"));
  assert.deepEqual(comparable(oneRequest.rows), comparable(general.rows));
  // Migration 0008: the claim takes the Step with a lock and loads (Tally) in the same request.
  assert.equal(oneRequest.stoppedClaims, 0);
  assert.ok(general.rows["history"]!.some((entry) => (entry as { step_type: string }).step_type === "Tally"), "the lock-and-load Step ran");
  // Migration 0009: Collect's, Listen's and Gather's waits and Produce's three publishes were one request each.
  assert.deepEqual({ waits: oneRequest.waitCommits, publishes: oneRequest.publishCommits }, { waits: 3, publishes: 3 });
  assert.equal(general.waitCommits + general.publishCommits, 0);
  // Migration 0010: Produce's three claims and Gather's two (asked, then executed) read their static selections in the claim.
  assert.ok(oneRequest.selectionsInClaims >= 5, `${oneRequest.selectionsInClaims} claims read their selection`);
  // The store writes a matched wait's result as the JSON text JSON.stringify writes (field order included).
  const matched = oneRequest.waitResults.filter((text) => text.includes("Results") || text.includes("Signals"));
  assert.ok(matched.length >= 3, `wait results with messages: ${JSON.stringify(oneRequest.waitResults)}`);
  for (const text of matched) {
    const parsed = JSON.parse(text) as { firedTimers: string[]; messages: { name: string; key: string; messageId: string; value: string; publishedAt: number }[] };
    const canonical = JSON.stringify({
      firedTimers: parsed.firedTimers,
      messages: parsed.messages.map(({ name, key, messageId, value, publishedAt }) => ({ name, key, messageId, value, publishedAt })),
    });
    assert.equal(text, canonical);
  }
  assert.ok(matched.some((text) => text.includes('"firedTimers":["due"]')), "Gather's all-of wait fired its due Timer");
  assert.ok(matched.some((text) => text.includes('"key":"key\\u0001one"')), "Listen's wait took the message under its escaped key");
  assert.ok(general.rows["attributes"]!.some((row) => (row as { name: string; value: string }).name === "SeenQueued" && (row as { value: string }).value !== ""), "a Channel load read queued messages");
  assert.deepEqual(general.rows["messages"]!.map((row) => (row as { value: string }).value), [], "every message was consumed");
});
