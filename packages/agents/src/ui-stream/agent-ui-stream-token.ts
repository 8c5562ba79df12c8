import { createHmac, timingSafeEqual } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Store } from "@perdure/engine";
import { maxAgentUIStreamTokenLength } from "../contract/ui-stream/resume-token.ts";
import { parseAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

export { agentResumeTokenHeaderName, maxAgentUIStreamTokenLength } from "../contract/ui-stream/resume-token.ts";

/**
 * Where a UI stream of one turn stands: the engine positions it reads from,
 * how many parts of the next event it already sent, and what it knows about
 * the parts sent so far.
 */
export interface AgentUIStreamPosition {
  turnId: string;
  /** Engine Stream token before the turn's first event; null reads from the oldest retained event. */
  turnOrigin: string | null;
  /** Engine Stream token of the last event read; null reads from the oldest retained event. */
  after: string | null;
  /** How many parts of the turn's next event were already sent. */
  partsSent: number;
  /** The engine index of that event, or null when `partsSent` is 0. */
  partsSentEventIndex: number | null;
  /** The state before that event's parts. */
  state: AgentUIStreamState;
}

/** Why a token was not accepted. */
export interface AgentUIStreamTokenRejection {
  rejection: string;
}

/** `u1` tokens carry their JSON as it is; `u1z` tokens deflate it, once it is over {@link compressionThresholdBytes}. */
const tokenVersion = "u1";
const compressedTokenVersion = "u1z";
const compressionThresholdBytes = 1024;
const keyDerivationLabel = "perdure agents ui-stream resume token v1";

interface TokenBody {
  flowId: string;
  turnId: string;
  turnOrigin: string | null;
  after: string | null;
  partsSent: number;
  partsSentEventIndex: number | null;
  state: AgentUIStreamState;
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}

function parseBody(value: unknown): TokenBody | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const body = value as Record<string, unknown>;
  const state = parseAgentUIStreamState(body.state);
  const valid = typeof body.flowId === "string" && typeof body.turnId === "string" && isNullableString(body.turnOrigin)
    && isNullableString(body.after) && Number.isSafeInteger(body.partsSent) && (body.partsSentEventIndex === null || Number.isSafeInteger(body.partsSentEventIndex));
  return valid && state !== undefined ? { ...(value as TokenBody), state } : undefined;
}

/** Drops the oldest entries of the state's lists; only a response with hundreds of tool calls needs it. */
function shrinkState(state: AgentUIStreamState): AgentUIStreamState | undefined {
  const lists = [state.toolStepExecutionIds, state.shownApprovalIds, state.shownToolCallIds, state.shownQuestionIds];
  const longest = lists.reduce((left, right) => (right.length > left.length ? right : left));
  if (longest.length === 0) return undefined;
  const keep = (list: string[]): string[] => (list === longest ? list.slice(Math.ceil(list.length / 4)) : list);
  return { ...state, toolStepExecutionIds: keep(state.toolStepExecutionIds), shownApprovalIds: keep(state.shownApprovalIds), shownToolCallIds: keep(state.shownToolCallIds), shownQuestionIds: keep(state.shownQuestionIds) };
}

const codecs = new WeakMap<Store, Promise<AgentUIStreamTokenCodec>>();

/**
 * Signs and reads UI stream resume tokens: `u1.<JSON, base64url>.<HMAC>`, or
 * `u1z.<deflated JSON, base64url>.<HMAC>` for a large state.
 * The key is derived from the store's secret, the one that signs engine Stream
 * tokens, so a token is valid for one store and, through its flow ID, one session.
 */
export class AgentUIStreamTokenCodec {
  private readonly key: Buffer;

  private constructor(key: Buffer) {
    this.key = key;
  }

  /** The codec of a store; derived once per store. */
  static forStore(store: Store): Promise<AgentUIStreamTokenCodec> {
    let codec = codecs.get(store);
    if (codec === undefined) {
      codec = store.tokenSecret().then((secret) => new AgentUIStreamTokenCodec(createHmac("sha256", secret).update(keyDerivationLabel).digest()));
      codecs.set(store, codec);
    }
    return codec;
  }

  private sign(version: string, body: string): string {
    return createHmac("sha256", this.key).update(`${version}.${body}`).digest("base64url");
  }

  /** Encodes a position of one session's turn, within {@link maxAgentUIStreamTokenLength}. */
  encode(flowId: string, position: AgentUIStreamPosition): string {
    let state: AgentUIStreamState | undefined = position.state;
    while (state !== undefined) {
      const body: TokenBody = { flowId, ...position, state };
      const json = Buffer.from(JSON.stringify(body));
      const isCompressed = json.length > compressionThresholdBytes;
      const version = isCompressed ? compressedTokenVersion : tokenVersion;
      const encoded = (isCompressed ? deflateRawSync(json) : json).toString("base64url");
      const token = `${version}.${encoded}.${this.sign(version, encoded)}`;
      if (token.length <= maxAgentUIStreamTokenLength) return token;
      state = shrinkState(state);
    }
    throw new RangeError(`a UI stream resume token of session ${flowId} ${position.turnId} stays over ${maxAgentUIStreamTokenLength} characters`);
  }

  /** Reads a token of this session, or says why it is rejected (too long, forged, corrupt, or another session's). */
  decode(flowId: string, token: string): AgentUIStreamPosition | AgentUIStreamTokenRejection {
    if (token.length > maxAgentUIStreamTokenLength) {
      return { rejection: `the resume token has ${token.length} characters, over the limit of ${maxAgentUIStreamTokenLength}` };
    }
    const [version, encoded, signature, extra] = token.split(".");
    if ((version !== tokenVersion && version !== compressedTokenVersion) || encoded === undefined || signature === undefined || extra !== undefined) {
      return { rejection: "the resume token is not a UI stream token of this version" };
    }
    const expected = Buffer.from(this.sign(version, encoded));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { rejection: "the resume token was not issued by this store (forged or corrupt)" };
    }
    let body: TokenBody | undefined;
    try {
      const bytes = Buffer.from(encoded, "base64url");
      const json = version === compressedTokenVersion ? inflateRawSync(bytes, { maxOutputLength: 4 * maxAgentUIStreamTokenLength }) : bytes;
      body = parseBody(JSON.parse(json.toString("utf8")));
    } catch {
      body = undefined;
    }
    if (body === undefined) return { rejection: "the resume token's content is not readable" };
    if (body.flowId !== flowId) return { rejection: "the resume token belongs to another session" };
    return { turnId: body.turnId, turnOrigin: body.turnOrigin, after: body.after, partsSent: body.partsSent, partsSentEventIndex: body.partsSentEventIndex, state: body.state };
  }
}

/** True for a rejected decode. */
export function isAgentUIStreamTokenRejection(value: AgentUIStreamPosition | AgentUIStreamTokenRejection): value is AgentUIStreamTokenRejection {
  return "rejection" in value;
}
