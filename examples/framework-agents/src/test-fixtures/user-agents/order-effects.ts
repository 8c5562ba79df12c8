/**
 * What the user-written agents' tools do, as a shop's code would, plus what
 * the test needs to watch them: a refund appends a line to
 * `PERDURE_TEST_EFFECTS_FILE` when it starts, then waits for
 * `PERDURE_TEST_GATE_FILE` to exist, so the test can kill `perdure dev`
 * while the refund runs and count how often it ran.
 */
import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export function lookUpOrder(orderId: string): string {
  return `order ${orderId} shipped`;
}

export async function refundOrder(framework: string, orderId: string): Promise<string> {
  const effects = process.env.PERDURE_TEST_EFFECTS_FILE;
  const gate = process.env.PERDURE_TEST_GATE_FILE;
  if (effects !== undefined) appendFileSync(effects, `${framework} refund ${orderId}\n`);
  while (gate !== undefined && !existsSync(gate)) await sleep(50);
  return `refunded order ${orderId}`;
}
