import assert from "node:assert/strict";
import { test } from "node:test";
import { deferred } from "../testing/conformance/harness.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import type { ClaimedAttempt } from "./claim-tasks.ts";

/** A stand-in claim: the ledger only hands claims to `launch`. */
function fakeClaim(name: string): ClaimedAttempt {
  return { input: name } as ClaimedAttempt;
}

/** A ledger whose hooks record, in order, what it asked of its Worker. */
function recordingLedger(adopt: () => Promise<boolean> = async () => true) {
  const events: string[] = [];
  const errors: unknown[] = [];
  const ledger = new ClaimLedger({
    launch: (claim) => events.push(`launch ${String(claim.input)}`),
    adoptLostClaims: async () => {
      events.push("adopt");
      return adopt();
    },
    resume: () => events.push("resume"),
    onError: (error) => errors.push(error),
  });
  return { ledger, events, errors };
}

void test("a failed claim transaction stops new claims and adopts only after the claims in flight were launched", async () => {
  const { ledger, events } = recordingLedger();
  const inFlight = deferred<readonly ClaimedAttempt[]>();
  const pending = ledger.run(ledger.claimable(2), () => inFlight.promise);
  await assert.rejects(ledger.run(ledger.claimable(2), () => Promise.reject(new Error("reply lost"))), /reply lost/);
  assert.equal(ledger.claimable(2), 0, "no claim transaction starts while claims are in doubt");
  assert.deepEqual(events, [], "adoption waits for the claim transaction in flight");
  inFlight.resolve([fakeClaim("a")]);
  await pending;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, ["launch a", "adopt", "resume"]);
  assert.equal(ledger.claimable(2), 2);
});

void test("a transaction that could claim nothing puts no claims in doubt", async () => {
  const { ledger, events } = recordingLedger();
  await assert.rejects(ledger.run(0, () => Promise.reject(new Error("commit failed"))));
  assert.equal(ledger.claimable(3), 3);
  assert.deepEqual(events, []);
});

void test("claims stay in doubt until an adoption succeeds and saw every lease; retries come from adoptWhenSettled", async () => {
  const outcomes: (boolean | Error)[] = [new Error("store down"), false, true];
  const { ledger, events, errors } = recordingLedger(async () => {
    const outcome = outcomes.shift();
    if (outcome instanceof Error) throw outcome;
    return outcome ?? true;
  });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  await assert.rejects(ledger.run(1, () => Promise.reject(new Error("reply lost"))));
  await settle();
  assert.equal(errors.length, 1, "a failed adoption is reported once");
  assert.equal(ledger.claimable(1), 0);
  ledger.adoptWhenSettled();
  await settle();
  assert.equal(ledger.claimable(1), 0, "an adoption that did not see every lease leaves the claims in doubt");
  ledger.adoptWhenSettled();
  await settle();
  assert.equal(ledger.claimable(1), 1);
  assert.deepEqual(events, ["adopt", "adopt", "adopt", "resume"]);
});

void test("claims put in doubt from outside (the store went back in time) stop new claims and are adopted once none is in flight, with no failed claim", async () => {
  const { ledger, events } = recordingLedger();
  const inFlight = deferred<readonly ClaimedAttempt[]>();
  const pending = ledger.run(ledger.claimable(2), () => inFlight.promise);
  ledger.doubt();
  assert.equal(ledger.claimable(2), 0, "no claim transaction starts while claims are in doubt");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, [], "adoption waits for the claim transaction in flight");
  inFlight.resolve([]);
  await pending;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, ["adopt", "resume"]);
  assert.equal(ledger.claimable(2), 2);

  // With nothing in flight, at once.
  ledger.doubt();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, ["adopt", "resume", "adopt", "resume"]);
});

void test("a claim transaction holds the slots it may fill until it has launched its claims, whether it lands or fails", async () => {
  const { ledger } = recordingLedger();
  const inFlight = deferred<readonly ClaimedAttempt[]>();
  let heldInside = -1;
  const running = ledger.run(3, async (hold) => {
    const claims = await inFlight.promise;
    // A commit's attempt ends: its slot passes to the tasks it claimed.
    hold(1);
    heldInside = ledger.held;
    return claims;
  }, 2);
  assert.equal(ledger.held, 2, "a commit's claim holds its limit less its own attempt's slot");
  inFlight.resolve([fakeClaim("a")]);
  await running;
  assert.equal(heldInside, 3);
  assert.equal(ledger.held, 0, "released once its claims launched");
  await assert.rejects(ledger.run(2, async () => {
    assert.equal(ledger.held, 2, "a claim of the loop holds its whole limit");
    throw new Error("connection reset");
  }));
  assert.equal(ledger.held, 0, "a failed claim releases what it held");
});
