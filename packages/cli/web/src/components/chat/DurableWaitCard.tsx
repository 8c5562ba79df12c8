// A `durable_wait` in the turn: when the wait ends and why. The wait is an
// engine Timer, so it costs nothing while it runs and ends on time even
// across restarts; the countdown here is only the browser's clock.
import { useEffect, useState } from "react";
import type { TimerData } from "../../lib/agent-parts.ts";
import { formatDuration } from "../../lib/format.ts";
import { ClockIcon } from "../Icons.tsx";
import { Badge } from "../StatusBadge.tsx";

/** "Thu 4 Dec, 10:00" in the reader's locale. */
function formatDueTime(due: number): string {
  return new Date(due).toLocaleString(undefined, { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

export function DurableWaitCard(props: { timer: TimerData; finished: boolean }) {
  const due = Date.parse(props.timer.waitUntil);
  const [now, setNow] = useState(Date.now());
  const waiting = !props.finished;
  useEffect(() => {
    if (!waiting) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [waiting]);
  const left = due - now;
  return (
    <div className={`wait-card${waiting ? " wait-active" : ""}`} data-testid="durable-wait" data-wait-until={props.timer.waitUntil}>
      <span className="wait-icon"><ClockIcon /></span>
      <div className="wait-body">
        <div className="wait-line">
          {waiting ? "Waiting durably until " : "Waited until "}
          <time dateTime={props.timer.waitUntil} title={props.timer.waitUntil}>{Number.isNaN(due) ? props.timer.waitUntil : formatDueTime(due)}</time>
        </div>
        {props.timer.reason !== "" && <div className="muted small">{props.timer.reason}</div>}
      </div>
      {waiting
        ? <Badge tone="amber" pulse>{left > 0 ? `in ${formatDuration(left)}` : "due now"}</Badge>
        : <Badge tone="green">done</Badge>}
    </div>
  );
}
