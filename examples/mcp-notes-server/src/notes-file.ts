/**
 * The notes, kept in one JSON file. Every MCP request the agent sends opens a
 * new connection, so over stdio every call runs in a new server process: the
 * notes must outlive the process, and a file is the simplest place that
 * does. Writes go to a temporary file that is renamed over the old one, so a
 * killed server never leaves half a file behind.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** One note. */
export interface Note {
  title: string;
  text: string;
  /** ISO 8601 time the note was added. */
  createdAt: string;
  /** The idempotency key of the `add_note` call that added it, so a repeated call adds nothing. */
  addedByKey: string | null;
}

/** The notes a new file starts with, so the demo has something to read. */
export const initialNotes: readonly Note[] = [
  { title: "returns", text: "Returns are free within 30 days of delivery; refunds go back to the original payment method.", createdAt: "2026-12-01T09:00:00.000Z", addedByKey: null },
  { title: "shipping", text: "Orders leave the warehouse within two working days; the tracking link is in the confirmation email.", createdAt: "2026-12-01T09:05:00.000Z", addedByKey: null },
];

/** A note title: letters, digits, `-` and `_`, 1 to 64 characters. */
export const noteTitlePattern = /^[A-Za-z0-9_-]{1,64}$/;

function isNote(value: unknown): value is Note {
  const note = value as Partial<Note> | null;
  return typeof note?.title === "string" && typeof note.text === "string" && typeof note.createdAt === "string" && (note.addedByKey === null || typeof note.addedByKey === "string");
}

/** The notes file at `path`; it is created with {@link initialNotes} on the first write. */
export class NotesFile {
  readonly path: string;

  constructor(path: string) {
    if (typeof path !== "string" || path === "") throw new TypeError(`notes file path ${JSON.stringify(path)} is invalid: give a file path`);
    this.path = path;
  }

  /** Every note, oldest first. */
  read(): Note[] {
    if (!existsSync(this.path)) return [...initialNotes];
    const parsed = JSON.parse(readFileSync(this.path, "utf8")) as { notes?: unknown };
    if (!Array.isArray(parsed.notes) || !parsed.notes.every(isNote)) throw new Error(`notes file ${this.path} is not a notes file: expected {"notes": [{"title", "text", "createdAt", "addedByKey"}]}`);
    return parsed.notes;
  }

  /** Replaces every note. */
  write(notes: readonly Note[]): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ notes }, null, 2)}\n`);
    renameSync(temporary, this.path);
  }
}
