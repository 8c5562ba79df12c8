/**
 * A JSON Schema as the zod raw shape an SDK MCP tool takes, for tools whose
 * arguments are known only as JSON Schema: the session's built-in tools,
 * and the tools of an `McpToolSource`.
 */
import { z } from "zod";

/**
 * Converts the JSON Schema of an arguments object to a zod raw shape
 * (`z.fromJSONSchema`, then the object's shape). A schema that is not an
 * object is refused, because an SDK MCP tool's arguments are an object.
 *
 * @example
 * const shape = zodRawShapeFromJsonSchema({ type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] });
 * const lookupOrder = tool("lookup_order", "Look up an order.", shape, async (args) => ...);
 */
export function zodRawShapeFromJsonSchema(schema: Record<string, unknown>): Record<string, z.ZodType> {
  const converted = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  if (!(converted instanceof z.ZodObject)) {
    throw new TypeError(`JSON Schema ${JSON.stringify(schema).slice(0, 200)} does not describe an object; an SDK MCP tool's arguments are an object, so give it "type": "object"`);
  }
  return converted.shape as Record<string, z.ZodType>;
}
