import { type Codec, defaultCodec } from "../internal/codec.ts";
import { validateInstanceKey, validateName } from "../internal/validate-name.ts";

/** A reference to one queue: a plain Channel or one ChannelMap instance. */
export interface ChannelRef<TMessage> {
  readonly kind: "channel" | "channel_instance";
  readonly name: string;
  readonly key: string;
  readonly codec: Codec<TMessage>;
}

/** A durable FIFO queue of one Flow instance. */
export interface ChannelDefinition<TMessage> extends ChannelRef<TMessage> {
  readonly kind: "channel";
}

/** One queue of a ChannelMap. */
export interface ChannelInstanceRef<TMessage> extends ChannelRef<TMessage> {
  readonly kind: "channel_instance";
}

/** A durable map of independent FIFO queues, keyed by string. */
export interface ChannelMapDefinition<TMessage> {
  readonly kind: "channel_map";
  readonly name: string;
  readonly codec: Codec<TMessage>;
  instance(key: string): ChannelInstanceRef<TMessage>;
}

/** A queued message with its engine-assigned, time-ordered ID. */
export interface ChannelMessage<TMessage> {
  readonly messageId: string;
  readonly message: TMessage;
  readonly publishedAt: Date;
}

/** Options of {@link channel} and {@link channelMap}. */
export interface ChannelOptions<TMessage> {
  /**
   * Turns messages into JSON data and back.
   * @default the identity codec
   */
  codec?: Codec<TMessage>;
}

/**
 * Declares a Channel. Steps and RPCs publish to it; a Step's wait consumes.
 *
 * @example
 * const inbox = channel<{ text: string }>("Inbox");
 */
export function channel<TMessage>(name: string, options: ChannelOptions<TMessage> = {}): ChannelDefinition<TMessage> {
  return Object.freeze({
    kind: "channel",
    name: validateName("Channel", name),
    key: "",
    codec: options.codec ?? defaultCodec<TMessage>(),
  });
}

/**
 * Declares a ChannelMap: one independent queue per key.
 *
 * @example
 * const replies = channelMap<Reply>("Replies");
 * ctx.publish(replies.instance(requestId), reply);
 */
export function channelMap<TMessage>(name: string, options: ChannelOptions<TMessage> = {}): ChannelMapDefinition<TMessage> {
  const validName = validateName("ChannelMap", name);
  const codec = options.codec ?? defaultCodec<TMessage>();
  return Object.freeze({
    kind: "channel_map",
    name: validName,
    codec,
    instance(key: string): ChannelInstanceRef<TMessage> {
      return { kind: "channel_instance", name: validName, key: validateInstanceKey(validName, key), codec };
    },
  });
}
