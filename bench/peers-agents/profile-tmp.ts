import { execFileSync } from "node:child_process";
import { openPerdureAgentPostgres } from "./perdure-agent.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";
import { measureSessionsThroughput } from "./turn-workload.ts";

const url = process.env["PROFILE_DATABASE_URL"]!;
const postmaster = Number(execFileSync("head", ["-1", `${process.env["PERDURE_TEST_POSTGRES_DIR"]}/data/postmaster.pid`], { encoding: "utf8" }).trim());
const pids = (): number[] => [postmaster, ...execFileSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).trim().split("\n").map(Number)];
const pgCpu = (): number => {
  let total = 0;
  for (const pid of pids()) {
    try {
      const fields = execFileSync("cat", [`/proc/${pid}/stat`], { encoding: "utf8" }).split(") ")[1]!.split(" ");
      total += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
  }
  return total * 10;
};
const system: AgentTurnSystem = process.env["SYSTEM"] === "dbos" ? await (await import("./dbos-agent.ts")).openDbosAgent(url, 20) : await openPerdureAgentPostgres(url, 16);
await measureSessionsThroughput(system, 4, 5);
const sessions = Number(process.env["SESSIONS"] ?? 16);
const turns = 10;
const cpu0 = process.cpuUsage();
const pg0 = pgCpu();
const t0 = performance.now();
const rate = await measureSessionsThroughput(system, sessions, turns);
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const pg = pgCpu() - pg0;
const n = sessions * turns;
console.log(`${rate.toFixed(1)} turns/s; per turn: node ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms CPU, postgres ${(pg / n).toFixed(2)} ms CPU (incl. other clients), wall ${(wall / n).toFixed(2)} ms`);
await system.close();
