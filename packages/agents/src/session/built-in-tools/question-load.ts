/** What an `AwaitQuestionAnswer` execution loads besides its record: the question's resolutions, so it can tell a raised question from an unraised one. */
import type { LoadSelection } from "@perdure/engine";
import type { SessionEnvironment } from "../session-environment.ts";

export function questionLoad(environment: SessionEnvironment, interruptId: string): LoadSelection[] {
  return [environment.persistence.interruptResolutions.instance(interruptId)];
}
