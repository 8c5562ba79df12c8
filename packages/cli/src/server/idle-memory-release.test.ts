import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startIdleMemoryRelease, startWorkerIdleMemoryRelease } from "./idle-memory-release.ts";

it("releases memory once after the last request in flight closed and the server stayed idle, never while one is in flight", async () => {
  const server = new EventEmitter();
  const release = startIdleMemoryRelease(server as never, 50);
  const request = (): EventEmitter => {
    const response = new EventEmitter();
    server.emit("request", {} as IncomingMessage, response as unknown as ServerResponse);
    return response;
  };
  try {
    // Nothing happened yet: no release.
    await sleep(150);
    assert.equal(release.releases, 0);
    const first = request();
    const stream = request();
    first.emit("close");
    // A stream is still open: still no release, however long it lasts.
    await sleep(150);
    assert.equal(release.releases, 0);
    stream.emit("close");
    for (let waited = 0; release.releases === 0 && waited < 5000; waited += 25) await sleep(25);
    assert.equal(release.releases, 1);
    // Idle on: nothing new to give back.
    await sleep(150);
    assert.equal(release.releases, 1);
    request().emit("close");
    for (let waited = 0; release.releases === 1 && waited < 5000; waited += 25) await sleep(25);
    assert.equal(release.releases, 2);
  } finally {
    release.stop();
  }
});

it("releases a Worker's memory once after a sampled attempt when none has run for idleMs, never while one runs", async () => {
  const worker = { activeCount: 0 };
  let collections = 0;
  const release = startWorkerIdleMemoryRelease(worker, { idleMs: 50, sampleMs: 10, collect: () => { collections += 1; } });
  const waitForReleases = async (count: number): Promise<void> => {
    for (let waited = 0; release.releases < count && waited < 10_000; waited += 10) await sleep(10);
  };
  try {
    // Never busy: nothing to give back, however long it stays idle.
    await sleep(150);
    assert.equal(release.releases, 0);
    worker.activeCount = 3;
    // Busy: no release while attempts run.
    await sleep(150);
    assert.equal(release.releases, 0);
    worker.activeCount = 0;
    await waitForReleases(1);
    assert.equal(release.releases, 1);
    assert.equal(collections, 1);
    // Idle on: one release per busy period.
    await sleep(150);
    assert.equal(release.releases, 1);
    worker.activeCount = 1;
    for (let waited = 0; waited < 150; waited += 10) await sleep(10);
    worker.activeCount = 0;
    await waitForReleases(2);
    assert.equal(collections, 2);
  } finally {
    release.stop();
  }
});
