/**
 * A function tool's arguments as `execute` gets them: parsed from the
 * model's text and checked by the tool's Standard Schema or JSON Schema, with
 * one message shape for a mismatch either way.
 */
import type { FunctionTool } from "./function-tool.ts";
import { parseArgumentsObject, parseToolArguments, type ParsedToolArguments } from "./json-schema-validation.ts";
import { checkStandardSchemaArguments } from "./standard-schema-arguments.ts";

/**
 * Parses and checks a call's arguments text for `tool`. A JSON Schema tool
 * gets the contract's messages; a Standard Schema tool gets its library's
 * first issue, after the same `at $.path: ` prefix.
 */
export async function parseFunctionToolArguments(tool: Pick<FunctionTool, "parameters" | "argumentsSchema">, argumentsText: string): Promise<ParsedToolArguments> {
  if (tool.argumentsSchema === undefined) return parseToolArguments(argumentsText, tool.parameters);
  const parsed = parseArgumentsObject(argumentsText);
  return parsed.ok ? checkStandardSchemaArguments(tool.argumentsSchema, parsed.value) : parsed;
}
