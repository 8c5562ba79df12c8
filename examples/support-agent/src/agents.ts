/**
 * The entry module `perdure dev` loads: every exported agent session Flow is
 * hosted. The support agent has the notes MCP server's tools
 * (`notes__list_notes`, `notes__read_note`, `notes__add_note`), notes kept in
 * `.perdure/notes.json` unless `PERDURE_NOTES_FILE` names another file.
 */
import { chooseModels } from "./model.ts";
import { createNotesToolSource } from "./notes-tools.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";

// PERDURE_MODEL=gpt-5-mini,gpt-5 (with a key) gives each session a model picker.
const { models, defaultModel } = await chooseModels();

export const supportAgentFlow = createSupportAgentFlow(defaultModel, { notes: createNotesToolSource(), models });
