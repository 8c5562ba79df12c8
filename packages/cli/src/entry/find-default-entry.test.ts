import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findDefaultEntry } from "./find-default-entry.ts";

test("the default entry is perdure.agents.ts, else the one *.agents.* module, else an error that says what to do", () => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-entry-"));
  try {
    assert.throws(() => findDefaultEntry(folder), { message: "no entry module here: create perdure.agents.ts exporting your agent Flows, or pass --entry <module>" });
    writeFileSync(join(folder, "calendar.agents.ts"), "");
    writeFileSync(join(folder, "notes.ts"), "");
    assert.equal(findDefaultEntry(folder), "calendar.agents.ts");
    writeFileSync(join(folder, "mail.agents.mjs"), "");
    assert.throws(() => findDefaultEntry(folder), { message: "several entry modules here (calendar.agents.ts, mail.agents.mjs); pass the one to use with --entry" });
    writeFileSync(join(folder, "perdure.agents.ts"), "");
    assert.equal(findDefaultEntry(folder), "perdure.agents.ts");
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
