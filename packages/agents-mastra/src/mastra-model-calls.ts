/**
 * Mastra's model calls, recorded and replayed: the runner's `prepareStep`
 * hands Mastra the step's model wrapped, so its call (the AI SDK language
 * model call options Mastra built, and the stream parts the model sent) is
 * kept as JSON for the session's `ModelCalls`, and a replay answers the
 * call with the recorded parts instead of calling the model.
 */
import type { RecordedModelCall, RecordedModelReplay } from "@perdure/agents";

/** The model call of one `RunModel`: its turn, the replay answering it (if any), and what was recorded. */
export interface MastraModelCallScope {
  turnId: string;
  replay: RecordedModelReplay | undefined;
  recorded: RecordedModelCall | undefined;
}

interface StreamingModel {
  doStream(options: Record<string, unknown>): PromiseLike<{ stream: ReadableStream<unknown> } & Record<string, unknown>>;
}

/** Call options that are handles of this call, not what the model is sent. */
const unrecordedOptions = new Set(["abortSignal", "headers", "includeRawChunks"]);

/**
 * Drops the time Mastra stamps on each prompt part when it builds the call
 * (`providerOptions.mastra.createdAt`): it changes on every call, and the
 * model provider never sees it.
 */
function withoutMastraTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMastraTimes);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).flatMap(([key, entry]): [string, unknown][] => {
    if (key !== "providerOptions" || typeof entry !== "object" || entry === null) return [[key, withoutMastraTimes(entry)]];
    const { mastra, ...others } = entry as Record<string, unknown>;
    const mastraRest = typeof mastra === "object" && mastra !== null ? Object.fromEntries(Object.entries(mastra).filter(([name]) => name !== "createdAt")) : mastra;
    const kept = mastraRest === undefined || (typeof mastraRest === "object" && mastraRest !== null && Object.keys(mastraRest).length === 0) ? others : { ...others, mastra: mastraRest };
    return Object.keys(kept).length === 0 ? [] : [[key, kept]];
  });
  return Object.fromEntries(entries);
}

/** A model call as the session records it: Mastra's call options to the model, without the live handles and Mastra's timestamps. */
export function recordedMastraRequest(options: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.fromEntries(Object.entries(options).filter(([key]) => !unrecordedOptions.has(key)));
  return withoutMastraTimes(JSON.parse(JSON.stringify(kept))) as Record<string, unknown>;
}

/** A stream part back from JSON: a response's timestamp is a Date again. */
function reviveStreamPart(part: unknown): unknown {
  if (typeof part !== "object" || part === null) return part;
  const record = part as Record<string, unknown>;
  return record.type === "response-metadata" && typeof record.timestamp === "string" ? { ...record, timestamp: new Date(record.timestamp) } : record;
}

function streamOf(parts: readonly unknown[]): ReadableStream<unknown> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(reviveStreamPart(part));
      controller.close();
    },
  });
}

/** Passes the model's parts through and records the call once the stream ends. */
function recordingStream(stream: ReadableStream<unknown>, request: Record<string, unknown>, scope: MastraModelCallScope): ReadableStream<unknown> {
  const parts: unknown[] = [];
  return stream.pipeThrough(new TransformStream<unknown, unknown>({
    transform(part, controller) {
      if ((part as { type?: unknown } | null)?.type !== "raw") parts.push(part);
      controller.enqueue(part);
    },
    flush() {
      scope.recorded = { request, response: { stream_parts: JSON.parse(JSON.stringify(parts)) as unknown } };
    },
  }));
}

/**
 * The step's model, wrapped: `doStream` records the call in `scope`, or,
 * when the scope has a replay, answers with the recorded stream parts and
 * never calls the model. Everything else reads through to the model.
 */
export function recordedMastraModel<TModel extends object>(model: TModel, scope: MastraModelCallScope): TModel {
  return new Proxy(model, {
    get(target, property, receiver) {
      if (property !== "doStream") {
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return async (options: Record<string, unknown>) => {
        const request = recordedMastraRequest(options);
        if (scope.replay !== undefined) {
          const response = (await scope.replay.respond(scope.turnId, request)) as { stream_parts?: unknown[] } | null;
          return { stream: streamOf(response?.stream_parts ?? []) };
        }
        const result = await (target as unknown as StreamingModel).doStream(options);
        return { ...result, stream: recordingStream(result.stream, request, scope) };
      };
    },
  });
}
