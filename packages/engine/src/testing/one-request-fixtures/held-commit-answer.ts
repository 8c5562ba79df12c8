/**
 * Holds the answer of one Flow's Step commits after they landed, so a test
 * can act while the committing Worker still counts the attempt's slot and
 * its claim holds the free ones (see `ClaimLedger.held`).
 */
import type { Store } from "../../store/store.ts";
import { pollUntil } from "../poll-until.ts";

export interface HeldCommitAnswer {
  /** Resolves once a commit of the Flow has landed and its answer is held. */
  landed(): Promise<void>;
  /** Lets the held answer go (and every later one of the Flow through). */
  letGo(): void;
}

/** Holds the answers of `flowId`'s commits through `store.oneRequest.commitStep` until `letGo`. */
export function holdCommitAnswers(store: Store, flowId: string): HeldCommitAnswer {
  const operations = store.oneRequest;
  if (operations === undefined) throw new Error("holdCommitAnswers needs a store with one-request commits");
  const commitStep = operations.commitStep.bind(operations);
  let letGo: () => void = () => undefined;
  const held = new Promise<void>((resolve) => { letGo = resolve; });
  let holding = false;
  operations.commitStep = async (commit) => {
    const reply = await commitStep(commit);
    if (commit.flowId === flowId) {
      holding = true;
      await held;
    }
    return reply;
  };
  return {
    landed: async () => {
      await pollUntil(() => holding, { timeoutMs: 60_000, description: `a commit of ${flowId} to land and be held` });
    },
    letGo: () => letGo(),
  };
}
