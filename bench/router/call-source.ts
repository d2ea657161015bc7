/**
 * What a simulated workload's calls are, for the worker simulation
 * (worker-simulation.ts): what each call costs on each model, and, for a call
 * the worker samples or shadow-scores, whether a model's reply agrees with
 * the reference's (the default contract's agreement check).
 *
 * The synthetic workloads (workloads.ts) draw each call's problem and replies
 * from the workload's true rates; the real-data mode (real-data/) answers
 * each call as recorded data says a model answered that prompt.
 */
import type { Random } from './random.js';
import { agrees, drawProblem, modelAnswer, referenceAnswer } from './task.js';
import { trueRateAt, type SimulatedModel, type Workload } from './workloads.js';

export interface CallSource {
  /** USD that call number `call` (from 0) costs on `model`. */
  cost(call: number, model: SimulatedModel): number;
  /**
   * Scores call number `call`: a function telling whether a model's reply to
   * it agrees with the reference's. Asked only for the calls the worker
   * samples or shadow-scores, then for each model in the order the worker
   * scores them; a source that draws replies takes them from `random` in that
   * order, so a run is reproducible.
   */
  score(call: number, random: Random): (model: SimulatedModel) => boolean;
}

/** The synthetic task (task.ts): every call costs a model's `costPerCall`; replies are right at the model's true rate at that call. */
export function syntheticCalls(workload: Workload): CallSource {
  return {
    cost: (_call, model) => model.costPerCall,
    score(call, random) {
      const problem = drawProblem(random);
      const answer = referenceAnswer(problem);
      return (model) => agrees(modelAnswer(problem, trueRateAt(workload, model, call), random), answer);
    },
  };
}
