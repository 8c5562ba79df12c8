import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as engine from "./index.ts";

test("the root entry loads no database driver: neither node:sqlite nor pg", () => {
  const rootEntry = fileURLToPath(new URL("./index.ts", import.meta.url));
  // A child process records every module the root entry pulls in.
  const probe = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ resolve(specifier, context, next) { loaded.push(specifier); return next(specifier, context); } });
    await import(${JSON.stringify(rootEntry)});
    console.log(JSON.stringify(loaded));
  `;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  const loaded = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "[]") as string[];
  assert.ok(loaded.length > 10, "the probe saw the engine's own modules");
  assert.ok(!loaded.some((specifier) => specifier === "node:sqlite" || specifier === "sqlite"), `node:sqlite was loaded: ${loaded.join(", ")}`);
  assert.ok(!loaded.some((specifier) => specifier === "pg" || specifier.startsWith("pg/")), "pg was loaded");
});

test("every exported error is branded: a stable code and a cross-copy isInstance guard", () => {
  const errorClasses = Object.entries(engine).filter(([name, value]) => name.endsWith("Error") && typeof value === "function") as [string, (new (message: string) => Error) & { code?: string; isInstance?: (value: unknown) => boolean }][];
  assert.ok(errorClasses.length >= 14);
  const codes = new Set<string>();
  for (const [name, ErrorClass] of errorClasses) {
    if (name === "PerdureError") continue;
    const error = new ErrorClass("probe");
    assert.equal(error.name, name);
    assert.equal(typeof ErrorClass.code, "string", `${name}.code`);
    assert.ok(!codes.has(ErrorClass.code ?? ""), `${name} repeats code ${String(ErrorClass.code)}`);
    codes.add(ErrorClass.code ?? "");
    assert.equal(ErrorClass.isInstance?.(error), true, `${name}.isInstance`);
    assert.equal(engine.PerdureError.isInstance(error), true);
    assert.equal(ErrorClass.isInstance?.(new Error("probe")), false);
  }
});
