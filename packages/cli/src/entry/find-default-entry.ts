/**
 * The entry module a command uses when none is given: `perdure.agents.ts`
 * in the current folder, or else the one `*.agents.ts` (or `.mts`, `.js`,
 * `.mjs`) file there, so an app that named its module after its agent
 * (`calendar.agents.ts`) needs no `--entry` for `perdure dev`, `sessions`,
 * `inspect` or `chat`.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError } from "@perdure/engine";

/** The conventional entry module name. */
export const defaultEntryName = "perdure.agents.ts";

const entryPattern = /^[^.].*\.agents\.(ts|mts|js|mjs)$/;

/**
 * The entry module to load from `folder` when the command line names none.
 * Throws an `InvalidInputError` that lists the candidates when there are
 * several, or says what to create when there is none.
 */
export function findDefaultEntry(folder: string): string {
  if (existsSync(join(folder, defaultEntryName))) return defaultEntryName;
  const candidates = readdirSync(folder).filter((name) => entryPattern.test(name)).sort();
  const [only] = candidates;
  if (candidates.length === 1 && only !== undefined) return only;
  if (candidates.length > 1) {
    throw new InvalidInputError(`several entry modules here (${candidates.join(", ")}); pass the one to use with --entry`);
  }
  throw new InvalidInputError(`no entry module here: create ${defaultEntryName} exporting your agent Flows, or pass --entry <module>`);
}
