/**
 * The prior a workload's route may take from its project (pooled-prior.ts):
 * the paired evidence of the project's workloads that ask the same model,
 * each under its own contract's current evidence version and relative
 * semantics, pooled per candidate; the candidate whose prior share saves the
 * most is offered to `decideSplit`, with the pool's latency verdict (the
 * candidate's latencies against the requested model's over the pool), which
 * stands in while the workload's own latencies are too few to judge.
 *
 * A pool's fit is cached per (account, project, requested model, candidate)
 * and made again when the pool has grown by `REFIT_GROWTH` (and at least
 * `REFIT_SAMPLES`): a fit reads every workload's counts, and the prior moves
 * little with one more sample. The workload's own share is computed from its
 * current evidence every time.
 */
import { qualitySemantics } from '../evals/eval-contract.js';
import type { Scope } from '../api/scope.js';
import type { CandidateCounts } from '../store/routing-store.js';
import { pairedSampleCount, withoutGrades, type PairedEvidence, type QualityBarContract } from './paired-quality.js';
import { fadeSamples, fitPool, priorShare, type PoolFit, type PriorShare } from './pooled-prior.js';
import { judgeLatency, type LatencyPolicy, type LatencySketches, type LatencyVerdict } from './latency-limit.js';
import type { RouterContext } from './router-context.js';
import { mergeEncoded } from '../store/latency-sketch.js';

const REFIT_GROWTH = 1.01;
const REFIT_SAMPLES = 20;

/** A cached fit, and the pool's paired samples when it was made. */
export interface CachedPoolFit {
  samples: number;
  fit: PoolFit | null;
}

export interface PriorCandidate {
  model: string;
  costPerCall: number;
  /** The workload's own evidence, as its decision reads it. */
  paired: PairedEvidence;
  /** Its latency verdict on the workload's own latencies: the pool's is read only while this one is `unknown`. */
  latency?: LatencyVerdict;
}

/**
 * The prior share that saves the most for this workload, or undefined when
 * no pool has one. `gradesDropped`: the workload's decision reads evidence
 * without grades (its grader was found unreliable), and so does the pool.
 */
export async function projectPrior(
  context: RouterContext,
  scope: Scope,
  requestedModel: string,
  requestedCostPerCall: number,
  candidates: readonly PriorCandidate[],
  policy: QualityBarContract,
  latencyPolicy: LatencyPolicy,
  gradesDropped: boolean,
): Promise<PriorShare | undefined> {
  // A workload past the fade serves on its own certificates: no need to read the project's evidence.
  if (candidates.every((candidate) => pairedSampleCount(candidate.paired) >= fadeSamples(policy))) return undefined;
  const rows = (await context.routing.listProjectEvidence(scope, requestedModel)).filter((row) =>
    inForce(context, { ...scope, workload: row.workload }, row),
  );
  // Decoding every workload's sketches costs more than the rest of a decision: only when a candidate's own latency is not known.
  let reference: LatencySketches | undefined;
  let best: { prior: PriorShare; saving: number } | undefined;
  for (const candidate of candidates) {
    const members = rows
      .filter((row) => row.candidateModel === candidate.model)
      .map((row) => (gradesDropped ? withoutGrades(row.paired) : row.paired));
    const key = [scope.accountId, scope.project, requestedModel, candidate.model, gradesDropped, policy.qualityBar, policy.confidence].join(
      '\u0000',
    );
    const fit = cachedFit(context, key, members, policy);
    if (fit === null) continue;
    const share = priorShare(fit, candidate.paired, policy);
    const saving = share * (requestedCostPerCall - candidate.costPerCall);
    if (!(share > 0 && saving > (best?.saving ?? 0))) continue;
    const prior: PriorShare = {
      model: candidate.model,
      share,
      workloads: fit.workloads,
      samples: fit.samples,
      notLossRate: fit.notLossRate,
    };
    if (candidate.latency?.state === 'unknown') {
      reference ??= pooledSketches(rows.filter((row) => row.candidateModel === requestedModel));
      prior.latency = judgeLatency(latencyPolicy, pooledSketches(rows.filter((row) => row.candidateModel === candidate.model)), reference);
    }
    best = { prior, saving };
  }
  return best?.prior;
}

/** One model's latencies over the pool's workloads: the prior's latency verdict until the workload has its own. */
function pooledSketches(rows: readonly CandidateCounts[]): LatencySketches {
  return { latency: mergeEncoded(rows.map((row) => row.latency)), ttft: mergeEncoded(rows.map((row) => row.ttft)) };
}

/** A row counts when it is its workload's current evidence under a relative contract. */
function inForce(context: RouterContext, scope: Scope, row: CandidateCounts): boolean {
  const { contract, evidenceVersion } = context.routes.contract(scope);
  return row.contractVersion === evidenceVersion && qualitySemantics(contract) === 'relative';
}

function cachedFit(context: RouterContext, key: string, members: readonly PairedEvidence[], policy: QualityBarContract): PoolFit | null {
  const samples = members.reduce((sum, evidence) => sum + pairedSampleCount(evidence), 0);
  const cached = context.poolFits.get(key);
  // A pool that shrank (a demotion forgot a workload's evidence) is fitted again at once.
  if (
    cached !== undefined &&
    samples >= cached.samples &&
    samples < Math.max(cached.samples * REFIT_GROWTH, cached.samples + REFIT_SAMPLES)
  )
    return cached.fit;
  const fit = fitPool(members, policy);
  context.poolFits.set(key, { samples, fit });
  return fit;
}
