/** `generateSessionProgram`: the session program of a seed. */
import { programRandom, type ProgramRandom } from "./program-random.ts";
import { programRejectionMessage, programUserText } from "./program-texts.ts";
import { programToolRequiresApproval, programToolSpecs } from "./program-tools.ts";
import { isSingleAttemptEffect, type ProgramModelCall, type ProgramToolBehavior, type ProgramToolCall, type ProgramTurn, type SessionProgram } from "./session-program.ts";

/** Options of {@link generateSessionProgram}. */
export interface GenerateSessionProgramOptions {
  /** @default 3 */
  maxTurns?: number;
  /** Model responses with tool calls per turn, before the answer. @default 2 */
  maxToolRounds?: number;
  /** Parallel tool calls per response. @default 4 */
  maxParallelToolCalls?: number;
}

function behaviorFor(random: ProgramRandom, isSingleAttempt: boolean): ProgramToolBehavior {
  const draw = random.next();
  if (isSingleAttempt) {
    if (draw < 0.7) return { kind: "succeed", transientFailures: 0 };
    return draw < 0.88 ? { kind: "tool-error" } : { kind: "crash" };
  }
  if (draw < 0.62) return { kind: "succeed", transientFailures: 0 };
  if (draw < 0.76) return { kind: "succeed", transientFailures: 1 };
  return draw < 0.93 ? { kind: "tool-error" } : { kind: "crash" };
}

function toolCallFor(random: ProgramRandom, turnId: string, modelCall: number, index: number): ProgramToolCall {
  const spec = random.pick(programToolSpecs);
  const toolCallId = `${turnId}-call-${modelCall}-${index}`;
  const requiresApproval = programToolRequiresApproval(spec);
  const approved = random.chance(0.7);
  return {
    toolCallId,
    toolName: spec.name,
    arguments: { n: random.integer(1, 999) },
    effect: spec.effect,
    requiresApproval,
    approval: !requiresApproval ? null : approved ? { approved: true } : { approved: false, rejectionMessage: random.chance(0.5) ? programRejectionMessage(toolCallId) : null },
    behavior: behaviorFor(random, isSingleAttemptEffect(spec.effect)),
  };
}

/**
 * The program of `seed`: 1 to `maxTurns` turns; each makes 1 to
 * `maxToolRounds` responses (0 in about one turn in seven) with 1 to `maxParallelToolCalls` parallel calls
 * of the catalogue's tools, then answers. About one model call in ten fails
 * once before it answers, and about one turn in ten fails for good at one of
 * its model calls. The same seed and options always give the same program.
 *
 * @example
 * const program = generateSessionProgram(42);
 * console.log(program.turns.length, programSize(program).toolCalls);
 */
export function generateSessionProgram(seed: number, options: GenerateSessionProgramOptions = {}): SessionProgram {
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new RangeError(`session program seed ${String(seed)} is invalid: use an integer from 0 to 4294967295`);
  const random = programRandom(seed);
  const turnCount = random.integer(1, options.maxTurns ?? 3);
  const turns: ProgramTurn[] = [];
  for (let turnNumber = 1; turnNumber <= turnCount; turnNumber += 1) {
    const turnId = `turn-${turnNumber}`;
    // Most turns call tools; some answer at once.
    const toolRounds = random.chance(0.15) ? 0 : random.integer(1, options.maxToolRounds ?? 2);
    // 0 answers; n fails for good at model call n.
    const failsAt = random.chance(0.1) ? random.integer(1, toolRounds + 1) : 0;
    const modelCalls: ProgramModelCall[] = [];
    for (let modelCall = 1; modelCall <= toolRounds + 1; modelCall += 1) {
      const alwaysFails = modelCall === failsAt;
      const transientFailures = !alwaysFails && random.chance(0.1) ? 1 : 0;
      const parallel = modelCall <= toolRounds ? random.integer(1, options.maxParallelToolCalls ?? 4) : 0;
      const toolCalls = Array.from({ length: parallel }, (_unused, index) => toolCallFor(random, turnId, modelCall, index));
      modelCalls.push({ modelCall, transientFailures, alwaysFails, toolCalls: alwaysFails ? [] : toolCalls });
      if (alwaysFails) break;
    }
    turns.push({ turnId, userText: programUserText(seed, turnNumber), modelCalls });
  }
  return { seed, turns };
}
