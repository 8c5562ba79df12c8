// Safety runs: store faults, crashes and pauses until the end; no invariant may break.
import { defineSimulationTests } from "./simulation-suite.ts";

defineSimulationTests("safety", import.meta.url);
