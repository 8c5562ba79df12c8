import { type Codec, defaultCodec } from "../internal/codec.ts";
import { validateInstanceKey, validateName } from "../internal/validate-name.ts";

/** The plain-instance key of an Attribute; map instances use non-empty keys. */
export const plainAttributeKey = "";

/** A reference to one stored Attribute value: a plain Attribute or one map instance. */
export interface AttributeRef<TValue> {
  readonly kind: "attribute" | "attribute_instance";
  readonly name: string;
  readonly key: string;
  readonly codec: Codec<TValue>;
}

/** A durable typed value of one Flow instance, always loaded for every Step. */
export interface AttributeDefinition<TValue> extends AttributeRef<TValue> {
  readonly kind: "attribute";
}

/** Selects every instance of an AttributeMap, or the instances in a key range. */
export interface AttributeMapSelection {
  readonly kind: "attribute_map_selection";
  readonly name: string;
  /** Inclusive lower key bound. */
  readonly fromKey?: string;
  /** Exclusive upper key bound. */
  readonly toKey?: string;
  /** Loads at most this many instances (lowest keys first). */
  readonly limit?: number;
}

/** One instance of an AttributeMap, stored separately from its siblings. */
export interface AttributeInstanceRef<TValue> extends AttributeRef<TValue> {
  readonly kind: "attribute_instance";
}

/** A durable map of independent typed values, keyed by string. */
export interface AttributeMapDefinition<TValue> {
  readonly kind: "attribute_map";
  readonly name: string;
  readonly codec: Codec<TValue>;
  /** The instance under `key`: read, write, load or lock it. */
  instance(key: string): AttributeInstanceRef<TValue>;
  /** Load selection of every instance (or a key range) for a Step. */
  all(range?: { fromKey?: string; toKey?: string; limit?: number }): AttributeMapSelection;
}

/** Options of {@link attribute} and {@link attributeMap}. */
export interface AttributeOptions<TValue> {
  /**
   * Turns values into JSON data and back.
   * @default the identity codec: values must already be plain JSON
   */
  codec?: Codec<TValue>;
}

/**
 * Declares a plain Attribute. Plain Attributes are loaded into every Step's
 * snapshot, so keep them small; put large or numerous values in an AttributeMap.
 *
 * @example
 * const balance = attribute<number>("Balance");
 */
export function attribute<TValue>(name: string, options: AttributeOptions<TValue> = {}): AttributeDefinition<TValue> {
  return Object.freeze({
    kind: "attribute",
    name: validateName("Attribute", name),
    key: plainAttributeKey,
    codec: options.codec ?? defaultCodec<TValue>(),
  });
}

/**
 * Declares an AttributeMap: independent instances by key, each stored in its
 * own row and loaded only when a Step selects it.
 *
 * @example
 * const orders = attributeMap<Order>("Orders");
 * ctx.write(orders.instance("order-7"), order);
 */
export function attributeMap<TValue>(name: string, options: AttributeOptions<TValue> = {}): AttributeMapDefinition<TValue> {
  const validName = validateName("AttributeMap", name);
  const codec = options.codec ?? defaultCodec<TValue>();
  return Object.freeze({
    kind: "attribute_map",
    name: validName,
    codec,
    instance(key: string): AttributeInstanceRef<TValue> {
      return { kind: "attribute_instance", name: validName, key: validateInstanceKey(validName, key), codec };
    },
    all(range: { fromKey?: string; toKey?: string; limit?: number } = {}): AttributeMapSelection {
      return { kind: "attribute_map_selection", name: validName, ...range };
    },
  });
}
