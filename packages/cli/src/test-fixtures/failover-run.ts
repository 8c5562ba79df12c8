/**
 * One PostgreSQL failover from outside: a primary and a streaming standby on
 * loopback behind a TCP proxy that plays the virtual IP, two `perdure
 * worker` processes of the gated support agent on it, sessions that ask for
 * a refund (a `non_idempotent_write` run in a single attempt, after an
 * approval). Half the approvals go in, the primary is killed mid-load, the
 * proxy is cut (fencing the old primary), the standby promoted and the
 * proxy pointed at it; then the other half go in. Reports what each session
 * ended with and how often each refund ran.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client } from "@perdure/engine";
import { PostgresStore } from "@perdure/engine/postgres";
import { CuttableTcpProxy, pollUntil } from "@perdure/engine/testing";
import { gatedSupportAgentFlow } from "./gated-support-agent.ts";
import { ReplicatedPostgres } from "./replicated-postgres.ts";
import { WorkerCommandProcess } from "./worker-command-process.ts";

export interface FailoverRunOptions {
  synchronous: boolean;
  sessions: number;
  /** Asynchronous variant: how long the Workers run on the primary after the standby stopped receiving, before the primary dies. */
  lagMs?: number;
  /** Asynchronous variant: the standby in `synchronous_standby_names` with the default `synchronous_commit = local` (see `ReplicatedPostgres`). */
  namedStandby?: boolean;
  /**
   * Asynchronous variant: how many sessions are approved after the standby
   * stopped receiving (acknowledged by the primary alone). With
   * `namedStandby`, the run then waits until that many transactions wait for
   * the standby (the confirmations of their single-attempt refunds) before
   * the primary dies. @default 0
   */
  approveDuringLag?: number;
  /**
   * Once every session finished: true when the Workers' output says all it
   * should (a Worker names a lost write when its check reaches it, which may
   * be after the sessions moved on). Polled for up to 30 s. @default none
   */
  outputSettled?: (output: string, refundRuns: ReadonlyMap<string, number>) => boolean;
  log?: (line: string) => void;
}

export interface FailoverRunResult {
  /** Each session's refund call status at the end (`failed` when the tool ran and refused the unknown order, `outcome_unknown`, …). */
  statuses: Map<string, string>;
  /** How many times each session's refund tool started. */
  refundRuns: Map<string, number>;
  /** The Worker processes (process IDs) each session's refund tool started in, once per start. */
  refundProcesses: Map<string, number[]>;
  /** Sessions that showed their approval pending again after the failover (the store lost it) and were approved again. */
  reapproved: string[];
  /** Milliseconds from the promotion to the first session finishing its turn, and to the last. */
  firstMovedMs: number;
  allFinishedMs: number;
  workerOutput: string;
  /** Sessions approved (and acknowledged) after the standby stopped receiving. */
  approvedDuringLag: string[];
  /** Transactions the primary showed waiting for the standby (`wait_event = 'SyncRep'`) just before it died. */
  standbyWaitsAtDeath: number;
}

/** `TurnToolCalls` key of turn 1: the turn number, 12 digits zero-padded. */
const turnOneKey = "000000000001";

function orderOf(index: number): string {
  return String(8000 + index);
}

async function retrying<TResult>(description: string, work: () => Promise<TResult>): Promise<TResult> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${description} kept failing for 60 s`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Every start of the refund tool so far, from the gated agent's invocation log, by order. */
function refundInvocations(folder: string): Array<{ orderId: string; processId: number }> {
  let text: string;
  try {
    text = readFileSync(join(folder, "invocations.jsonl"), "utf8");
  } catch {
    return [];
  }
  const starts: Array<{ orderId: string; processId: number }> = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let entry: { event?: string; name?: string; order_id?: string; processId?: number; details?: { order_id?: string } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      // A line still being written.
      continue;
    }
    const orderId = entry.order_id ?? entry.details?.order_id;
    if ((entry.event ?? entry.name) === "refund_order:start" && orderId !== undefined) starts.push({ orderId, processId: entry.processId ?? 0 });
  }
  return starts;
}

export async function runFailover(options: FailoverRunOptions): Promise<FailoverRunResult> {
  const log = options.log ?? (() => undefined);
  const cluster = await ReplicatedPostgres.start({ synchronous: options.synchronous, namedStandby: options.namedStandby === true });
  const proxy = new CuttableTcpProxy({ host: "127.0.0.1", port: cluster.primaryPort });
  const folder = mkdtempSync(join(tmpdir(), "perdure-failover-gates-"));
  const workers: WorkerCommandProcess[] = [];
  let store: PostgresStore | undefined;
  try {
    await proxy.open();
    const url = cluster.url(proxy.port);
    for (let index = 0; index < 2; index += 1) {
      workers.push(await WorkerCommandProcess.start({ gateDirectory: folder, args: ["--concurrency", "4", "--log-format", "json"], env: { PERDURE_DATABASE_URL: url } }));
    }
    store = await PostgresStore.open({ connectionString: url, connectTimeoutMs: 2000, onError: () => undefined });
    const client = new Client({ store });
    const sessions = new AgentSessionTestClient(client, gatedSupportAgentFlow);
    const ids = Array.from({ length: options.sessions }, (_, index) => `failover-${index}`);
    for (const [index, id] of ids.entries()) await sessions.startSession(id, { initialMessage: `please refund order ${orderOf(index)}` });
    const pendingOf = async (id: string): Promise<string | undefined> => (await client.getAttributes(id, gatedSupportAgentFlow.pendingInterrupts))[0]?.[0]?.interruptId;
    const interrupts = new Map<string, string>();
    for (const id of ids) interrupts.set(id, await pollUntil(() => pendingOf(id), { timeoutMs: 60_000, description: `${id}'s approval` }));
    log(`${ids.length} sessions wait for their refund's approval`);

    const half = Math.ceil(ids.length / 2);
    for (const id of ids.slice(0, half)) await sessions.resolveInterrupt(id, { interruptId: interrupts.get(id) ?? "", approved: true });
    if (options.namedStandby === true) {
      // Those refunds start before the standby stops receiving: cut off, their confirmations would wait with the ones
      // approved during the cut, and could take every Worker slot, so that none of those is ever claimed.
      const firstOrders = ids.slice(0, half).map((_, index) => orderOf(index));
      await pollUntil(() => {
        const started = new Set(refundInvocations(folder).map((entry) => entry.orderId));
        return firstOrders.every((order) => started.has(order)) ? true : undefined;
      }, { timeoutMs: 120_000, intervalMs: 100, description: `the refunds of the ${half} sessions approved before the cut to start` });
    }
    const approvedDuringLag = options.synchronous ? [] : ids.slice(half, half + (options.approveDuringLag ?? 0));
    let standbyWaitsAtDeath = 0;
    if (!options.synchronous) {
      // The standby stops receiving: what the Workers commit from now on exists on the primary only.
      await cluster.replicationLink.cut();
      // Acknowledged by the primary alone: ordinary commits do not wait for the standby.
      for (const id of approvedDuringLag) await sessions.resolveInterrupt(id, { interruptId: interrupts.get(id) ?? "", approved: true });
      if (options.namedStandby === true && approvedDuringLag.length > 0) {
        // Each of those refunds is claimed (on the primary alone), and its claim's confirmation waits for the standby, which never answers.
        const sessionList = approvedDuringLag.map((id) => `'${id}'`).join(", ");
        const claimedAndWaiting = async (): Promise<boolean> => {
          const claimed = Number(await cluster.query(cluster.primaryPort, `SELECT count(*) FROM perdure.executions WHERE step_type = 'CallSingleAttemptTool' AND claimed_by IS NOT NULL AND flow_id IN (${sessionList})`));
          const waiting = Number(await cluster.query(cluster.primaryPort, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"));
          return claimed >= approvedDuringLag.length && waiting >= approvedDuringLag.length;
        };
        await pollUntil(async () => ((await claimedAndWaiting()) ? true : undefined), { timeoutMs: 120_000, intervalMs: 100, description: `the refunds of ${approvedDuringLag.length} sessions approved during the cut claimed, and confirmations waiting for the standby` });
        // Only the confirmations wait, not their sessions: a commit that locks their Flow rows, as a message or an approval does,
        // goes through (a bound under the Workers' own 20 s lock timeout, so a Worker transaction stuck behind a confirmation shows).
        await cluster.query(cluster.primaryPort, `SET lock_timeout = '10s'; SELECT count(*) FROM (SELECT flow_id FROM perdure.flows WHERE flow_id IN (${sessionList}) FOR UPDATE) AS locked`).catch((error: unknown) => {
          throw new Error(`the Flow rows of sessions whose single-attempt claims wait for the standby stayed locked: ${(error as Error).message}`, { cause: error });
        });
      }
      await new Promise((resolve) => setTimeout(resolve, options.lagMs ?? 1500));
      if (options.namedStandby === true) standbyWaitsAtDeath = Number(await cluster.query(cluster.primaryPort, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"));
    }
    // Fence the old primary (the virtual IP leaves it), then it dies mid-load.
    await proxy.cut();
    await cluster.killPrimary();
    await cluster.promoteStandby();
    proxy.retarget({ host: "127.0.0.1", port: cluster.standbyPort });
    await proxy.open();
    const promotedAt = Date.now();
    log("the standby was promoted and the proxy points at it");

    for (const id of ids.slice(half + approvedDuringLag.length)) await retrying(`approving ${id}`, () => sessions.resolveInterrupt(id, { interruptId: interrupts.get(id) ?? "", approved: true }));
    const finishedAt = new Map<string, number>();
    const reapproved: string[] = [];
    await pollUntil(async () => {
      for (const id of ids) {
        if (finishedAt.has(id)) continue;
        const [state] = await retrying(`reading ${id}`, () => client.getAttributes(id, gatedSupportAgentFlow.agentState));
        if (state !== undefined && state.turnCount >= 1 && state.activeTurnId === null) {
          finishedAt.set(id, Date.now());
          continue;
        }
        // An approval the store lost (asynchronous replication): the person approves again, as the UI would ask.
        const pending = await retrying(`reading ${id}'s interrupts`, () => pendingOf(id));
        if (pending !== undefined && !reapproved.includes(id)) {
          reapproved.push(id);
          await retrying(`re-approving ${id}`, () => sessions.resolveInterrupt(id, { interruptId: pending, approved: true }));
        }
      }
      return finishedAt.size === ids.length ? true : undefined;
    }, { timeoutMs: 90_000, intervalMs: 100, description: "every session to finish its turn after the failover" }).catch(async (error: unknown) => {
      // Say which sessions did not finish, and where each stands.
      const unfinished = await Promise.all(ids.filter((id) => !finishedAt.has(id)).map(async (id) => {
        const description = await client.describe(id).catch(() => undefined);
        return `${id}: ${JSON.stringify(description?.executions.slice(-4) ?? "unreadable")}`;
      }));
      const leases = await cluster.query(cluster.standbyPort, "SELECT string_agg(concat_ws(' ', flow_id, execution_id, step_type, status, claimed_by, lease_token, attempt, lease_expires_at - (extract(epoch from clock_timestamp()) * 1000)::bigint), ' | ') FROM perdure.executions WHERE status IN ('running', 'asking') OR claimed_by IS NOT NULL").catch(() => "");
      const livenesses = await cluster.query(cluster.standbyPort, "SELECT string_agg(worker_id, ' ') FROM perdure.workers").catch((failure: unknown) => String(failure));
      throw new Error(`${(error as Error).message}; unfinished: ${unfinished.join("; ")}; leases on the new primary: ${leases}; Workers: ${livenesses}`, { cause: error });
    });
    const times = [...finishedAt.values()].map((time) => Math.max(0, time - promotedAt));

    const statuses = new Map<string, string>();
    for (const id of ids) {
      const [turnCalls] = await client.getAttributes(id, gatedSupportAgentFlow.turnToolCalls.instance(turnOneKey));
      statuses.set(id, turnCalls?.toolCalls.find((call) => call.toolName === "refund_order")?.status ?? "missing");
    }
    const refundRuns = new Map<string, number>(ids.map((id) => [id, 0]));
    const refundProcesses = new Map<string, number[]>(ids.map((id) => [id, []]));
    for (const { orderId, processId } of refundInvocations(folder)) {
      const id = `failover-${Number(orderId) - 8000}`;
      refundRuns.set(id, (refundRuns.get(id) ?? 0) + 1);
      refundProcesses.get(id)?.push(processId);
    }
    const outputOf = (): string => workers.map((worker) => worker.output).join("\n");
    const settled = options.outputSettled;
    if (settled !== undefined) await pollUntil(() => (settled(outputOf(), refundRuns) ? true : undefined), { timeoutMs: 30_000, intervalMs: 100, description: "the Workers to say all they should" }).catch(() => undefined);
    return { statuses, refundRuns, refundProcesses, reapproved, firstMovedMs: Math.min(...times), allFinishedMs: Math.max(...times), workerOutput: outputOf(), approvedDuringLag, standbyWaitsAtDeath };
  } finally {
    await store?.close().catch(() => undefined);
    for (const worker of workers) await worker.stop();
    // For a run that failed: what the Workers said, each run after the last in one file.
    if (process.env.PERDURE_FAILOVER_OUTPUT !== undefined) appendFileSync(process.env.PERDURE_FAILOVER_OUTPUT, `=== failover run ended ${new Date().toISOString()}\n${workers.map((worker) => worker.output).join("\n")}\n`);
    await proxy.cut();
    await cluster.dispose();
    rmSync(folder, { recursive: true, force: true });
  }
}
