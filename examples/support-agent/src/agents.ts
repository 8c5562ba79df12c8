/** The entry module `perdure dev` loads: every exported agent session Flow is hosted. */
import { chooseModel } from "./model.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";

const { model } = await chooseModel();

export const supportAgentFlow = createSupportAgentFlow(model);
