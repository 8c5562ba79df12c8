// Liveness runs: faults stop after the chaos phase; then every Flow must finish within the bound.
import { defineSimulationTests } from "./simulation-suite.ts";

defineSimulationTests("liveness", import.meta.url);
