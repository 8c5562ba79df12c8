// Shows a JSON value the way a person reads it: a small object as labelled
// fields, anything else as indented JSON.
import { parseMaybeJson, prettyJson } from "../lib/format.ts";

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function primitiveText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}

export function ValueView(props: { value: unknown; emptyLabel?: string }) {
  const value = parseMaybeJson(props.value);
  if (value === undefined || value === null || value === "" || (typeof value === "object" && Object.keys(value).length === 0)) {
    return <span className="muted">{props.emptyLabel ?? "none"}</span>;
  }
  if (typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length <= 10 && entries.every(([, entry]) => isPrimitive(entry) && primitiveText(entry).length <= 160)) {
      return (
        <dl className="fields">
          {entries.map(([key, entry]) => (
            <div className="field" key={key}>
              <dt>{key}</dt>
              <dd className={typeof entry === "string" ? "" : "mono"}>{entry === null ? <span className="muted">null</span> : primitiveText(entry)}</dd>
            </div>
          ))}
        </dl>
      );
    }
  }
  if (typeof value === "string") return <div className="value-text">{value}</div>;
  return <pre className="json">{prettyJson(value)}</pre>;
}
