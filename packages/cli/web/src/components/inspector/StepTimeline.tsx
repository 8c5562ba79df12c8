// The Flow's Step executions as a Gantt chart: one row per execution, one
// bar per attempt. Waits are hatched, failed attempts red, cancelled ones
// grey, the running one pulses. Click a row for its attempts in detail.
import { Fragment, useLayoutEffect, useMemo, useRef, useState, type RefObject } from "react";
import type { SessionInspection } from "../../lib/api.ts";
import { axisLabelPaddingPx, chooseAxisLabels, estimateAxisLabelWidthPx } from "../../lib/axis-labels.ts";
import { formatClock, formatDuration, oneLine, prettyJson } from "../../lib/format.ts";
import { buildScale, buildTimelineRows, inferTurnStarts, type TimelineRow, type TimelineScale, type TimelineSegment } from "../../lib/timeline.ts";
import { Badge } from "../StatusBadge.tsx";

const stepBlurbs: Record<string, string> = {
  StartAgentSession: "sets the session up",
  AwaitUserMessage: "waits for a user message",
  RunModel: "one model call",
  AwaitToolApproval: "waits for a person to approve",
  CallTool: "runs a tool (retried on failure)",
  CallSingleAttemptTool: "runs a tool exactly once",
  RecordToolFailure: "records a failed tool call",
  RecordToolOutcomeUnknown: "records a call whose outcome is unknown",
  ResumeTurn: "continues the turn after its tools",
  RecordTurnFailure: "records a failed turn",
};

function segmentTitle(row: TimelineRow, segment: TimelineSegment): string {
  const took = formatDuration(segment.end - segment.start);
  const from = formatClock(new Date(segment.start).toISOString());
  const head = `${row.stepType} #${row.executionId}`;
  if (segment.kind === "wait") return `${head}\n${segment.status === "active" ? `waiting for ${took} (${row.activeStatus ?? "waiting"})` : `waited or retried over ${took}`}, from ${from}`;
  const what = segment.kind === "check" ? "checked its wait condition" : `attempt ${segment.attempt}`;
  const state = segment.status === "active" ? "running now" : segment.status;
  const lines = [`${head} · ${segment.method} · ${what}`, `${state} · ${took} · from ${from}`];
  if (segment.error !== null) lines.push(`error: ${oneLine(segment.error, 300)}`);
  return lines.join("\n");
}

function Bar(props: { row: TimelineRow; segment: TimelineSegment; scale: TimelineScale }) {
  const { segment, scale } = props;
  const left = scale.x(segment.start) * 100;
  const width = Math.max(0, scale.x(segment.end) * 100 - left);
  const classes = ["tl-bar", `tl-${segment.kind}`, `tl-status-${segment.status}`, `cat-${props.row.category}`];
  return <span className={classes.join(" ")} style={{ left: `min(${left}%, calc(100% - 3px))`, width: `${width}%` }} title={segmentTitle(props.row, segment)} />;
}

function idleTitle(gap: TimelineScale["gaps"][number]): string {
  return `${formatDuration(gap.end - gap.start)} with no Step executing`;
}

function GapBands(props: { scale: TimelineScale; titled?: boolean }) {
  return (
    <>
      {props.scale.gaps.map((gap) => (
        <span key={gap.start} className="tl-gap" style={{ left: `${gap.x0 * 100}%`, width: `${(gap.x1 - gap.x0) * 100}%` }} title={props.titled === true ? idleTitle(gap) : undefined} />
      ))}
    </>
  );
}

/** The element's content width in pixels, 0 until it is measured. */
function useContentWidth(element: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const current = element.current;
    if (current === null) return;
    setWidth(current.clientWidth);
    const observer = new ResizeObserver(([entry]) => setWidth(entry?.contentRect.width ?? current.clientWidth));
    observer.observe(current);
    return () => observer.disconnect();
  }, [element]);
  return width;
}

/**
 * Measures a label's slot as `.tl-axis-label` sets its text (10px, weight
 * 600, the track's font family), since fonts differ from machine to machine.
 */
function axisLabelWidthMeasure(track: HTMLElement): (text: string) => number {
  const context = document.createElement("canvas").getContext("2d");
  if (context === null) return estimateAxisLabelWidthPx;
  context.font = `600 10px ${getComputedStyle(track).fontFamily}`;
  // One pixel more for subpixel rounding of the text and the slot.
  return (text) => Math.ceil(context.measureText(text).width) + axisLabelPaddingPx + 1;
}

/** The axis track: the idle gaps, and the lengths of those whose labels fit without touching another. */
function AxisTrack(props: { scale: TimelineScale }) {
  const track = useRef<HTMLDivElement>(null);
  const trackWidthPx = useContentWidth(track);
  const measure = useRef<((text: string) => number) | null>(null);
  const labels = useMemo(() => {
    const candidates = props.scale.gaps.map((gap) => ({ key: gap.start, text: formatDuration(gap.end - gap.start), x: (gap.x0 + gap.x1) / 2, priority: gap.end - gap.start }));
    if (track.current !== null) measure.current ??= axisLabelWidthMeasure(track.current);
    return chooseAxisLabels(candidates, { trackWidthPx, labelWidthPx: measure.current ?? estimateAxisLabelWidthPx });
  }, [props.scale, trackWidthPx]);
  return (
    <div className="tl-track" ref={track}>
      <GapBands scale={props.scale} titled />
      {labels.map((label) => (
        <span key={label.key} className="tl-axis-label" data-testid="axis-label" style={{ left: `${label.left}px`, width: `${label.width}px` }}>{label.text}</span>
      ))}
    </div>
  );
}

function rowDuration(row: TimelineRow): number {
  return row.end - row.start;
}

function AttemptDetails(props: { row: TimelineRow }) {
  return (
    <div className="tl-details">
      <p className="muted small tl-details-blurb">
        <strong>{props.row.stepType}</strong> {stepBlurbs[props.row.stepType] ?? ""}
        {props.row.status === "active" ? ` · ${props.row.activeStatus ?? "active"} for ${formatDuration(props.row.end - props.row.start)}` : ` · ${formatDuration(props.row.end - props.row.start)} from first to last attempt`}
        {props.row.estimatedStart ? " · no method has finished yet, so its start is estimated" : ""}
      </p>
      <table className="attempts">
        <thead>
          <tr>
            <th>method</th>
            <th>attempt</th>
            <th>status</th>
            <th>started</th>
            <th>took</th>
          </tr>
        </thead>
        <tbody>
          {props.row.segments.filter((segment) => segment.kind !== "wait").map((segment, index) => (
            <Fragment key={index}>
              <tr className={`attempt-${segment.status}`}>
                <td className="mono">{segment.method}</td>
                <td>{segment.attempt}</td>
                <td>{segment.status === "active" ? <Badge tone="blue" pulse>running</Badge> : segment.status === "failed" ? <Badge tone="red">failed</Badge> : segment.status === "cancelled" ? <Badge tone="grey">cancelled</Badge> : <Badge tone="green">completed</Badge>}</td>
                <td className="mono">{formatClock(new Date(segment.start).toISOString())}</td>
                <td className="mono">{formatDuration(segment.end - segment.start)}</td>
              </tr>
              {segment.error !== null && (
                <tr className="attempt-error-row">
                  <td colSpan={5}><pre className="error-block">{segment.error}</pre></td>
                </tr>
              )}
              {segment.outcome !== undefined && segment.outcome !== null && (
                <tr>
                  <td colSpan={5}>
                    <details className="outcome">
                      <summary>{segment.method === "wait_until" ? "wait result" : "decision"}</summary>
                      <pre className="json">{prettyJson(segment.outcome)}</pre>
                    </details>
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function StepTimeline(props: { inspection: SessionInspection; now: number }) {
  const rows = useMemo(() => buildTimelineRows(props.inspection, props.now), [props.inspection, props.now]);
  const scale = useMemo(() => buildScale(rows), [rows]);
  const turnStarts = useMemo(() => inferTurnStarts(rows, props.inspection.snapshot.state?.turn_count ?? 0), [rows, props.inspection.snapshot.state?.turn_count]);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [showAll, setShowAll] = useState(false);
  const limit = 60;
  const visible = showAll || rows.length <= limit ? rows : rows.slice(-limit);

  if (rows.length === 0) return <div className="empty-panel">No Step has run yet.</div>;

  const toggle = (executionId: string): void => {
    const next = new Set(open);
    if (next.has(executionId)) next.delete(executionId);
    else next.add(executionId);
    setOpen(next);
  };

  return (
    <div className="timeline" data-testid="step-timeline">
      <div className="tl-row tl-axis">
        <div className="tl-label muted small">
          {rows.length} executions since {formatClock(new Date(scale.start).toISOString()).slice(0, 8)}
        </div>
        <AxisTrack scale={scale} />
        <div className="tl-duration muted small">took</div>
      </div>
      {visible.length < rows.length && (
        <button type="button" className="button button-ghost small tl-more" onClick={() => setShowAll(true)}>
          Show {rows.length - visible.length} earlier executions
        </button>
      )}
      {visible.map((row) => {
        const expanded = open.has(row.executionId);
        return (
          <Fragment key={row.executionId}>
            {turnStarts.has(row.executionId) && (
              <div className="tl-turn">
                <span className="tl-turn-label">{turnStarts.get(row.executionId)}</span>
                <span className="tl-turn-line" />
              </div>
            )}
            <button type="button" className={`tl-row tl-exec tl-row-${row.status}${expanded ? " expanded" : ""}`} onClick={() => toggle(row.executionId)} aria-expanded={expanded} data-step-type={row.stepType}>
              <div className="tl-label" title={`${row.stepType}: ${stepBlurbs[row.stepType] ?? "a Step"}`}>
                <span className={`tl-swatch cat-${row.category}`} />
                <span className="tl-step">{row.stepType}</span>
                <span className="tl-exec-id">#{row.executionId}</span>
                {row.status === "active" && <span className={`tl-active-dot tl-active-${row.activeStatus ?? "running"}`} title={row.activeStatus === "running" ? "running now" : `active: ${row.activeStatus ?? "waiting"}`} />}
                {row.executeAttempts > 1 && <span className={`tl-attempts${row.failedAttempts > 0 ? " has-failures" : ""}`} title={`${row.executeAttempts} attempts, ${row.failedAttempts} failed`}>×{row.executeAttempts}</span>}
              </div>
              <div className="tl-track">
                <GapBands scale={scale} />
                {row.segments.map((segment, index) => <Bar key={index} row={row} segment={segment} scale={scale} />)}
              </div>
              <div className={`tl-duration${row.status === "active" ? " active" : ""}`}>{formatDuration(rowDuration(row))}</div>
            </button>
            {row.lastError !== null && !expanded && (
              <div className={`tl-error${row.status === "failed" ? "" : " retried"}`} title={row.lastError}>
                {row.status === "failed" ? "failed: " : "retried after: "}
                {oneLine(row.lastError, 160)}
              </div>
            )}
            {expanded && <AttemptDetails row={row} />}
          </Fragment>
        );
      })}
      <div className="tl-legend">
        <span><span className="tl-swatch cat-model" /> model</span>
        <span><span className="tl-swatch cat-tool" /> tool</span>
        <span><span className="tl-swatch cat-wait" /> waits on a person</span>
        <span><span className="tl-swatch cat-session" /> session</span>
        <span><span className="legend-bar tl-wait" /> waiting</span>
        <span><span className="legend-tick" /> wait checked</span>
        <span><span className="legend-bar tl-status-failed" /> failed attempt</span>
        <span><span className="legend-bar tl-status-cancelled" /> cancelled</span>
        <span><span className="legend-gap" /> idle, squeezed</span>
      </div>
    </div>
  );
}
