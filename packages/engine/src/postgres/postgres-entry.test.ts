import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

/** The bare specifiers a fresh Node process resolves while importing `entry`. */
function specifiersResolvedBy(entry: string): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
    await import(${JSON.stringify(entry)});
    console.log(JSON.stringify(seen));
  `;
  const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: import.meta.dirname, encoding: "utf8" });
  return JSON.parse(output.trim().split("\n").at(-1) ?? "[]") as string[];
}

const isPg = (specifier: string): boolean => specifier === "pg" || specifier.startsWith("pg/");

test("the engine's root entry does not load pg; @perdure/engine/postgres does", () => {
  assert.equal(specifiersResolvedBy("@perdure/engine").filter(isPg).length, 0);
  assert.ok(specifiersResolvedBy("@perdure/engine/postgres").some(isPg));
});
