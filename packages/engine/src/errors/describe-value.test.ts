import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeValue } from "./describe-value.ts";

describe("describeValue", () => {
  it("renders JSON and cuts long values", () => {
    assert.equal(describeValue("abc"), '"abc"');
    assert.equal(describeValue(null), "null");
    assert.equal(describeValue(undefined), "undefined");
    assert.equal(describeValue("x".repeat(200), 10), `"xxxxxxxxx…`);
  });

  it("never throws: deep nesting, cycles and BigInts get a description", () => {
    let deep: unknown = "leaf";
    for (let depth = 0; depth < 100_000; depth += 1) deep = [deep];
    assert.throws(() => JSON.stringify(deep), RangeError);
    assert.equal(describeValue(deep), "an array that is not JSON");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.equal(describeValue(cycle), "an object that is not JSON");
    assert.equal(describeValue(10n), "bigint");
  });
});
