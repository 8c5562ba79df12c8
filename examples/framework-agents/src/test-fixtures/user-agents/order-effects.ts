/**
 * What the user-written agents' tools do, as a shop's code would, plus what
 * the tests need to watch them: every call that changes something (and each
 * attempt of the stock check) appends a line to `PERDURE_TEST_EFFECTS_FILE`
 * when it starts. A refund then waits for `PERDURE_TEST_GATE_FILE` to exist,
 * so a test can kill `perdure dev` while it runs and count how often it ran.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

function logEffect(line: string): void {
  const effects = process.env.PERDURE_TEST_EFFECTS_FILE;
  if (effects !== undefined) appendFileSync(effects, `${line}\n`);
}

export function lookUpOrder(orderId: string): string {
  return `order ${orderId} shipped`;
}

export async function refundOrder(framework: string, orderId: string): Promise<string> {
  logEffect(`${framework} refund ${orderId}`);
  const gate = process.env.PERDURE_TEST_GATE_FILE;
  while (gate !== undefined && !existsSync(gate)) await sleep(50);
  return `refunded order ${orderId}`;
}

export function cancelOrder(framework: string, orderId: string): string {
  logEffect(`${framework} cancel ${orderId}`);
  return `cancelled order ${orderId}`;
}

export function resetPassword(framework: string, orderId: string): string {
  logEffect(`${framework} reset ${orderId}`);
  return `reset the password of order ${orderId}`;
}

/** A payment provider that fails after it may have charged: the error a shop's client library throws. */
export function chargeOrder(framework: string, orderId: string): string {
  logEffect(`${framework} charge ${orderId}`);
  throw new Error("upstream 503");
}

/** A stock service that fails on the first request for an order and answers the next (a read worth retrying). */
export function checkStock(framework: string, orderId: string): string {
  const effects = process.env.PERDURE_TEST_EFFECTS_FILE;
  const line = `${framework} stock ${orderId}`;
  const attemptsBefore = effects !== undefined && existsSync(effects) ? readFileSync(effects, "utf8").split("\n").filter((entry) => entry === line).length : 0;
  logEffect(line);
  if (attemptsBefore === 0) throw new Error("stock service unavailable");
  return `3 of order ${orderId} in stock`;
}
