/**
 * A chain Flow and a Step commit built by hand, for tests of a store's
 * one-request operations: the commit of a Flow's start execution that
 * moves to one new Chain Step and claims one task.
 */
import assert from "node:assert/strict";
import { Client } from "../../client/client.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import type { OneRequestOperations, StepCommit } from "../../store/step-commit.ts";
import type { Store } from "../../store/store.ts";
import { claimCatalogOf } from "../../worker/one-request-commit.ts";

const ChainStep = defineStep<{ remaining: number }>("Chain", {
  execute: (_context, input) => (input.remaining > 0 ? moveTo("Chain", { remaining: input.remaining - 1 }) : completeFlow({ done: true })),
});
export const chainFlow = defineFlow({ type: "OneRequestChain", start: "Chain", steps: [ChainStep] });

/** Starts `flowId`, claims its start execution as "worker-a", and returns that execution's commit moving to one new Chain Step. */
export async function startAndClaim(store: Store, operations: OneRequestOperations, flowId: string): Promise<StepCommit> {
  await new Client({ store }).start(chainFlow, flowId, { remaining: 5 });
  const now = store.clock.now();
  const flows = new Map([[chainFlow.flowType, chainFlow]]);
  const { flowTypes, catalog } = claimCatalogOf(flows);
  const claimed = await operations.claimTasks({ workerId: "worker-a", now, claim: { flowTypes, catalog, limit: 1 } });
  const execution = claimed.claims[0]?.execution;
  assert.ok(execution !== undefined && execution.flowId === flowId, `the claim took ${flowId}'s start`);
  return {
    flowId,
    executionId: execution.executionId,
    workerId: "worker-a",
    leaseToken: execution.leaseToken,
    method: "execute",
    now,
    startedAt: now,
    writes: [],
    movements: [{
      flowId, flowType: chainFlow.flowType, stepType: "Chain", input: JSON.stringify({ remaining: 4 }), status: "ready", claimedBy: null, leaseToken: 0,
      leaseExpiresAt: null, deadlineAt: null, availableAt: now, attempt: 0, executeClaims: 0, scheduledAt: now, expiresAt: null, conditions: null,
      waitResult: JSON.stringify({ firedTimers: [], messages: [] }), checkpoint: null, movementOptions: null, recoveryError: null, lastError: null, createdAt: now,
    }],
    finish: null,
    ready: null,
    outcome: JSON.stringify({ kind: "move", moveTo: ["Chain"] }),
    historyKeep: 100,
    holdsLocks: false,
    claim: { flowTypes, catalog, limit: 1 },
  };
}

