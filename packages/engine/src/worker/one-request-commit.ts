/**
 * The one-request form of a Step commit (see `store/step-commit.ts`): which
 * outcomes qualify, the request for them, the claim catalog of a Worker's
 * Flow types, and the claimed attempts built from the store's reply.
 */
import type { FlowCore } from "../flow/flow.ts";
import { continuationPlace, newExecutionRow } from "../flow/flow-transaction.ts";
import { resolveExecutionOptions, type ExecutionOptions } from "../step/execution-options.ts";
import type { StepDefinition } from "../step/step.ts";
import { methodLoadOf, storedLoad, type ResolvedMethodOptions, type StepMethodName, type StoredLoad } from "../step/step-options.ts";
import { storeConditions, type StoredWaitResult } from "../step/stored-conditions.ts";
import type { ExecutionRow } from "../store/store.ts";
import { claimLeaseTimesOf, claimCatalogKey, type ClaimCatalog, type ClaimCatalogEntry, type OneRequestOperations, type StepCommit, type StepCommitClaim, type StoreClaim } from "../store/step-commit.ts";
import type { AttemptOutcome, ClaimedAttempt, ClaimNext, PreparedDecision } from "./commit-attempt-types.ts";
import { Snapshot } from "./snapshot.ts";

interface FlowTypeCatalog {
  flowTypes: string[];
  catalog: ClaimCatalog;
}

const catalogs = new WeakMap<ReadonlyMap<string, FlowCore>, FlowTypeCatalog>();
const longCatalogs = new WeakMap<ReadonlyMap<string, FlowCore>, FlowTypeCatalog>();
const loadingCatalogs = new WeakMap<ReadonlyMap<string, FlowCore>, FlowTypeCatalog>();

/**
 * A Step type's selection when it is a list that the store may read in the
 * claim; for a function, an empty list, so that the claim reads the
 * movement's own loads (the Worker uses them when they cover what the
 * function selects, see {@link claimedAttemptOf}); else null (nothing, or a
 * key with U+0000, which the store's JSON cannot hold).
 */
function staticLoadsOf(step: StepDefinition<unknown>, method: StepMethodName): StoredLoad[] | null {
  const load = methodLoadOf(step.options, method);
  if (typeof load === "function") return [];
  if (load === undefined || load.length === 0) return null;
  const loads = load.map(storedLoad);
  return jsonbRefuses(JSON.stringify(loads)) ? null : loads;
}

function isPlainMethod(options: ResolvedMethodOptions): boolean {
  return options.lockNames.length === 0;
}

/** Whether a Step type's method selects loads of its own (a movement may add more, see `ExecutionOptions.extraLoads`). */
export function stepSelectsLoads(step: StepDefinition<unknown>, method: StepMethodName): boolean {
  const load = methodLoadOf(step.options, method);
  return typeof load === "function" || (load !== undefined && load.length > 0);
}

/**
 * The Step methods of these Flow types the store may claim on its own.
 * Without `locksAndLoads`: methods without locks of Step types without load
 * selections, so that the claim is a lease and the snapshot is the plain
 * Attributes. With it (for a store that offers
 * `OneRequestOperations.claimsLocksAndLoads`): every method, in the long
 * entry form with its lock names and whether its Step type selects loads.
 * Computed once per Worker.
 */
export function claimCatalogOf(flows: ReadonlyMap<string, FlowCore>, locksAndLoads = false, readsLoads = false): FlowTypeCatalog {
  const cache = locksAndLoads ? (readsLoads ? loadingCatalogs : longCatalogs) : catalogs;
  const cached = cache.get(flows);
  if (cached !== undefined) return cached;
  const catalog: Record<string, ClaimCatalogEntry> = {};
  for (const flow of flows.values()) {
    for (const stepType of flow.stepsByName.keys()) {
      const options = resolveExecutionOptions(flow, stepType, null);
      const entryOf = (method: ResolvedMethodOptions, name: StepMethodName): ClaimCatalogEntry | undefined => {
        // A lock name the store's JSON cannot hold (a key with U+0000 or a lone surrogate) would make the store refuse
        // the whole catalog, so every claim of this Worker: such a method is left to the general claim.
        if (locksAndLoads && jsonbRefuses(JSON.stringify(method.lockNames))) return undefined;
        const selectsLoads = stepSelectsLoads(options.step, name);
        const staticLoads = readsLoads ? staticLoadsOf(options.step, name) : null;
        if (locksAndLoads && readsLoads) return [method.timeoutMs, method.heartbeatTimeoutMs, method.lockNames, selectsLoads, staticLoads];
        if (locksAndLoads) return [method.timeoutMs, method.heartbeatTimeoutMs, method.lockNames, selectsLoads];
        return selectsLoads || !isPlainMethod(method) ? undefined : [method.timeoutMs, method.heartbeatTimeoutMs];
      };
      const asking = options.step.waitUntil === undefined ? undefined : entryOf(options.waitUntil, "wait_until");
      if (asking !== undefined) catalog[claimCatalogKey(flow.flowType, stepType, "asking")] = asking;
      const ready = entryOf(options.execute, "execute");
      if (ready !== undefined) catalog[claimCatalogKey(flow.flowType, stepType, "ready")] = ready;
    }
  }
  const resolved = { flowTypes: [...flows.keys()], catalog };
  cache.set(flows, resolved);
  return resolved;
}

/** {@link claimCatalogOf} in the form `operations`' claims accept. */
export function claimCatalogFor(flows: ReadonlyMap<string, FlowCore>, operations: Pick<OneRequestOperations, "claimsLocksAndLoads" | "claimsReadLoads">): FlowTypeCatalog {
  return claimCatalogOf(flows, operations.claimsLocksAndLoads === true, operations.claimsReadLoads === true);
}

/** The claim part of a one-request commit, or undefined when the Worker claims nothing next. */
export function oneRequestClaimOf(next: ClaimNext | undefined, locksAndLoads = false, readsLoads = false): StepCommitClaim | undefined {
  if (next === undefined || next.limit <= 0) return undefined;
  const { flowTypes, catalog } = claimCatalogOf(next.flows, locksAndLoads, readsLoads);
  return { flowTypes, catalog, limit: next.limit };
}

/** The history outcome text of an `execute` decision. */
export function decisionSummary(decision: PreparedDecision): string {
  return JSON.stringify({
    kind: decision.kind,
    ...(decision.movements.length > 0 ? { moveTo: decision.movements.map((movement) => movement.stepType) } : {}),
    ...(decision.cancelStepTypes.length > 0 ? { cancel: decision.cancelStepTypes } : {}),
    ...(decision.error === undefined ? {} : { error: decision.error }),
  });
}

/** A new execution's row without the number the store assigns. */
export function withoutNumber(row: ExecutionRow): Omit<ExecutionRow, "seq" | "executionId"> {
  const copy: Partial<ExecutionRow> = { ...row };
  delete copy.seq;
  delete copy.executionId;
  return copy as Omit<ExecutionRow, "seq" | "executionId">;
}

const readyTotalsByFlow = new WeakMap<FlowCore, Readonly<Record<string, number | null>>>();

/** Each Step type's `execute` retry window without movement options, for waits a commit's publishes make ready. Computed once per Flow. */
export function readyTotalsOf(flow: FlowCore): Readonly<Record<string, number | null>> {
  let totals = readyTotalsByFlow.get(flow);
  if (totals === undefined) {
    const computed: Record<string, number | null> = {};
    for (const stepType of flow.stepsByName.keys()) computed[stepType] = resolveExecutionOptions(flow, stepType, null).execute.retry.totalDurationMs;
    totals = computed;
    readyTotalsByFlow.set(flow, totals);
  }
  return totals;
}

/** What a one-request commit may take besides plain results, by what the store offers. */
export interface OneRequestCapabilities {
  /** `OneRequestOperations.claimsLocksAndLoads`. */
  locksAndLoads?: boolean;
  /** `OneRequestOperations.commitsWaitsAndPublishes`. */
  waitsAndPublishes?: boolean;
  /** `OneRequestOperations.claimsReadLoads`. */
  readsLoads?: boolean;
}

/** JSON.stringify's escape of a lone surrogate (it writes well-formed pairs as they are); a literal backslash before such text only costs a fallback. */
const lonelySurrogateEscape = /\\u[dD][89a-fA-F]/;

/**
 * Whether JSON text holds a string PostgreSQL's jsonb refuses: U+0000, or a
 * lone surrogate (as a string cut inside an emoji has). Such a request would
 * fail on every retry, so it takes the general path, which stores text.
 */
export function jsonbRefuses(json: string): boolean {
  return json.includes("\\u0000") || lonelySurrogateEscape.test(json);
}
/** Whether text holds a surrogate that is not half of a pair; `isWellFormed` checks without a regular expression's scan. */
function hasLoneSurrogate(text: string): boolean {
  return !text.isWellFormed();
}

const noWaitResult = JSON.stringify({ firedTimers: [], messages: [] } satisfies StoredWaitResult);

/**
 * The one-request commit of an outcome, or undefined when the outcome needs
 * the general path: a failed attempt or cancellations; publishes (they may
 * complete waits) and a wait with conditions (Timers and matching) unless
 * the store matches waits itself (`waitsAndPublishes`).
 */
export function planOneRequestCommit(claim: ClaimedAttempt, workerId: string, outcome: AttemptOutcome, next: ClaimNext | undefined, now: number, capabilities: OneRequestCapabilities = {}): StepCommit | undefined {
  const waitsAndPublishes = capabilities.waitsAndPublishes === true;
  if (outcome.kind === "error" || (outcome.publishes.length > 0 && !waitsAndPublishes)) return undefined;
  // A string that is not well-formed UTF-16 (a lone surrogate, as a string cut inside an emoji has) is
  // escaped as \uD8xx in the request's JSON, which PostgreSQL's jsonb refuses: the general path stores it.
  if (outcome.writes.some((write) => hasLoneSurrogate(write.key) || (write.value !== null && hasLoneSurrogate(write.value)))
    || outcome.publishes.some((publish) => hasLoneSurrogate(publish.key) || (publish.value !== undefined && publish.value !== null && hasLoneSurrogate(publish.value)))) return undefined;
  const { execution, flow } = claim;
  const publishes = outcome.publishes.map((publish) => ({ name: publish.name, key: publish.key, value: publish.value ?? "null" }));
  const base = {
    flowId: execution.flowId,
    executionId: execution.executionId,
    workerId,
    leaseToken: execution.leaseToken,
    now,
    startedAt: claim.claimedAt,
    writes: outcome.writes.map((write) => ({ name: write.name, key: write.key, value: write.value })),
    historyKeep: flow.historyRetention,
    holdsLocks: claim.methodOptions.lockNames.length > 0,
    claim: oneRequestClaimOf(next, capabilities.locksAndLoads === true, capabilities.readsLoads === true),
    ...(publishes.length > 0 ? { publishes, readyTotals: readyTotalsOf(flow) } : {}),
    // Where the waits this commit completes queue: the chain's place, as FlowTransaction.makeReady.
    ...(publishes.length > 0 || (outcome.kind === "wait_until" && outcome.conditions !== null) ? { place: continuationPlace(execution, claim.claimedAt, now) } : {}),
  };
  if (outcome.kind === "wait_until") {
    if (claim.method !== "wait_until") return undefined;
    const total = claim.options.execute.retry.totalDurationMs;
    const expiresAt = total === null ? null : now + total;
    if (outcome.conditions !== null) {
      if (!waitsAndPublishes) return undefined;
      let conditions: string;
      let earliestTimerAt: number | undefined;
      try {
        const stored = storeConditions(execution.stepType, outcome.conditions, now);
        conditions = JSON.stringify(stored);
        for (const item of stored.items) {
          if (item.kind === "timer" && item.dueAt > now) earliestTimerAt = Math.min(earliestTimerAt ?? item.dueAt, item.dueAt);
        }
      } catch {
        // Conditions the engine refuses: the general path reports them as it always does.
        return undefined;
      }
      // A key with U+0000 or a lone surrogate, which the store's JSON cannot hold: the general path stores it as text.
      if (jsonbRefuses(conditions)) return undefined;
      const wait = { conditions, flowType: execution.flowType, expiresAt, earliestTimerAt };
      return { ...base, method: "wait_until", movements: [], finish: null, ready: null, wait, outcome: conditions };
    }
    return {
      ...base,
      method: "wait_until",
      movements: [],
      finish: null,
      ready: { waitResult: noWaitResult, expiresAt },
      outcome: null,
    };
  }
  const { decision } = outcome;
  if (decision.cancelStepTypes.length > 0 || claim.method !== "execute") return undefined;
  let movements: StepCommit["movements"] = [];
  if (decision.kind === "move") {
    try {
      // Numbered by the store; the placeholder sequence number is dropped.
      movements = decision.movements.map((movement) => {
        return withoutNumber(newExecutionRow(flow, execution.flowId, 0, movement, now, continuationPlace(execution, claim.claimedAt, now)));
      });
    } catch {
      // An unknown Step type: the general path reports it as it always does.
      return undefined;
    }
  }
  const finish = decision.kind === "complete" ? { status: "completed" as const, output: decision.output ?? null, error: null }
    : decision.kind === "fail" ? { status: "failed" as const, output: null, error: decision.error ?? "failed" }
    : null;
  return { ...base, method: "execute", movements, finish, ready: null, outcome: decisionSummary(decision) };
}

/**
 * Whether the claim of a commit would stop at a task this commit queues: a
 * new movement, or the execution a wait without conditions makes ready,
 * that the Worker's catalog does not cover.
 */
function claimStopsAt(commit: StepCommit, claimed: ClaimedAttempt): boolean {
  const catalog: ClaimCatalog = commit.claim?.catalog ?? {};
  if (commit.ready !== null) return claimLeaseTimesOf(catalog, { ...claimed.execution, status: "ready" }) === undefined;
  return commit.movements.some((movement) => claimLeaseTimesOf(catalog, movement) === undefined);
}

/**
 * The one-request commit of an outcome for `oneRequest`, or undefined when the
 * general path should commit it (see {@link planOneRequestCommit} and
 * `OneRequestOperations.embedded`).
 */
export function planOneRequestCommitFor(oneRequest: OneRequestOperations, claim: ClaimedAttempt, workerId: string, outcome: AttemptOutcome, next: ClaimNext | undefined, now: number): StepCommit | undefined {
  const plan = planOneRequestCommit(claim, workerId, outcome, next, now, {
    locksAndLoads: oneRequest.claimsLocksAndLoads === true,
    waitsAndPublishes: oneRequest.commitsWaitsAndPublishes === true,
    readsLoads: oneRequest.claimsReadLoads === true,
  });
  if (plan === undefined || oneRequest.embedded !== true || plan.claim === undefined) return plan;
  return claimStopsAt(plan, claim) ? undefined : plan;
}

/** The attempt a Worker runs for a task the store claimed along with a commit. */
export function claimedAttemptOf(flows: ReadonlyMap<string, FlowCore>, claimed: StoreClaim, now: number): ClaimedAttempt | undefined {
  const { execution } = claimed;
  const flow = flows.get(execution.flowType);
  if (flow === undefined) return undefined;
  const options = resolveExecutionOptions(flow, execution.stepType, execution.movementOptions);
  const method = execution.status === "asking" ? "wait_until" : "execute";
  const methodOptions = method === "wait_until" ? options.waitUntil : options.execute;
  const input: unknown = JSON.parse(execution.input);
  const plain = Snapshot.ofPlainAttributes(flow, claimed.plainAttributes);
  const { selection } = claimed;
  // Read in the claim: used when it is the selection Snapshot.load would read (the same loads; a load
  // function evaluated on the claim's own plain Attributes), else read again after the claim.
  if (selection !== undefined && sameLoads(selectedLoadsOrUndefined(options, method, input, plain), selection.loads)) {
    const snapshot = Snapshot.ofLoaded(flow, claimed.plainAttributes, selection.loads, selection.loaded);
    return { flow, execution, options, method, methodOptions, input, snapshot, claimedAt: now, snapshotLoaded: true };
  }
  return { flow, execution, options, method, methodOptions, input, snapshot: plain, claimedAt: now };
}

function selectedLoadsOrUndefined(options: ExecutionOptions, method: StepMethodName, input: unknown, plain: Snapshot): StoredLoad[] | undefined {
  try {
    return Snapshot.selectedLoads(options.step, method, input, plain, options.extraLoads);
  } catch {
    // A load function that throws: the read after the claim reports it as it always did.
    return undefined;
  }
}

/** Whether two selections read the same (the same loads, in any order, duplicates aside). */
function sameLoads(selected: readonly StoredLoad[] | undefined, claimed: readonly StoredLoad[]): boolean {
  if (selected === undefined) return false;
  const left = new Set(selected.map((load) => JSON.stringify(load)));
  const right = new Set(claimed.map((load) => JSON.stringify(load)));
  return left.size === right.size && [...left].every((key) => right.has(key));
}
