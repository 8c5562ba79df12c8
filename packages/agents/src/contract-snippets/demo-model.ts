/**
 * The contract's "Demo model without a key" example, with only its import
 * paths changed. Above the marker: what the example leaves to the reader.
 */
import { createAiSdkModelClient } from "../ai-sdk/index.ts";

const isDemo = true;
const openai = (modelId: string): string => modelId;

// ---- the contract's snippet ----
import { ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";
function replyAsDemoModel(request: ModelRequest): ScriptedModelReply {
const results = ScriptedModelClient.toolResults(request);
if (results.length > 0) {
return { text: results.map((result) => result.output).join("; ") };
}
return { text: `Demo reply: ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}` };
}
const model = isDemo ? new ScriptedModelClient(replyAsDemoModel) : createAiSdkModelClient(openai("gpt-5-mini"));
// ---- end of the snippet ----

export { model, replyAsDemoModel };
