import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TurnControlData } from "./agent-parts.ts";
import { turnToStop, withLocalStops } from "./turn-stops.ts";

describe("the chat's Stop button", () => {
  it("stops the turn this tab streams when the session's snapshot still names an older turn or none", () => {
    assert.equal(turnToStop("turn-1", "turn-2"), "turn-2");
    assert.equal(turnToStop(null, "turn-2"), "turn-2");
    assert.equal(turnToStop("turn-9", "turn-10"), "turn-10", "turn numbers compare as numbers");
  });

  it("stops the snapshot's turn when it is the newer one, or when this tab streams nothing", () => {
    assert.equal(turnToStop("turn-3", "turn-2"), "turn-3");
    assert.equal(turnToStop("turn-3", null), "turn-3");
    assert.equal(turnToStop("turn-3", "turn-3"), "turn-3");
    assert.equal(turnToStop(null, null), null);
  });
});

describe("the outcomes of turns this tab stopped", () => {
  const steered: TurnControlData = { turnId: "turn-1", outcome: "steered", steeredMessageCount: 2, messageCount: 3 };
  const outcomes = new Map([["turn-1", steered]]);

  it("shows a stopped turn as cancelled once it is no longer active, when its stream did not say so", () => {
    const shown = withLocalStops(outcomes, new Set(["turn-2"]), null);
    assert.deepEqual(shown.get("turn-2"), { turnId: "turn-2", outcome: "cancelled", steeredMessageCount: 0, messageCount: 0 });
    assert.equal(shown.get("turn-1"), steered);
  });

  it("says nothing while the stopped turn still runs, and keeps what a stream sent", () => {
    assert.equal(withLocalStops(outcomes, new Set(["turn-2"]), "turn-2"), outcomes);
    assert.equal(withLocalStops(outcomes, new Set(["turn-1"]), null).get("turn-1"), steered);
    assert.equal(withLocalStops(outcomes, new Set(), null), outcomes);
  });
});
