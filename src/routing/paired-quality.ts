/**
 * Quality relative to the requested model, by paired comparison: the
 * evidence, and whether a candidate or a per-call policy passes the bar.
 * Pure functions; the router keeps a `PairedEvidence` per (workload,
 * candidate, contract checks) and calls these after every sample.
 *
 * ## What a sample says
 * A sampled call is answered by the requested model R and replayed on a
 * candidate C. Let r, c ∈ {0, 1} say whether each reply is right (or
 * acceptable), and d = c − r. The sample yields one `PairedOutcome`:
 *   same  the replies agree after normalising (equal text, JSON, tool calls):
 *         equal quality, d = 0, no judge.
 *   win   the judge says C right, R wrong: d = +1.
 *   loss  the judge says R right, C wrong: d = −1.
 *   tie   both acceptable or both wrong (a pairwise judge's flip is a tie): d = 0.
 * and, when something graded R's reply on its own (a reference answer, a
 * reference-free check, a judge asked to grade, user feedback), a grade:
 * `requestedRight`.
 *
 * ## The bar (DESIGN §5): E[c] ≥ bar · E[r], with bar ∈ (0, 1]
 *   E[c] − bar·E[r] = E[c − r] + (1 − bar)·E[r] = E[d] + (1 − bar)·E[r] ≥ 0.
 * R's own mistakes cost C nothing (a win counts for C), and R's quality
 * enters only through the slack (1 − bar)·E[r] that the bar allows.
 *
 * ## From what is observed to lower bounds, sample by sample
 * Each sample gets a value d̲ and a value r̲ whose means are at most E[d]
 * and E[r] (`sampleValues`); an anytime-valid lower bound on the mean of
 * d̲ + (1 − bar)·r̲ (bounded-mean-sequence.ts) is then one on
 * E[c] − bar·E[r], and the bar is certified when it is ≥ 0.
 *
 * Judge error. ε bounds the probability that the judge's verdict on a
 * disagreement is wrong, whatever the truth of the pair: a true tie, a true
 * loss or a true win is misjudged at most ε of the time (what the judge's
 * self-checks measure on true ties: two replies of R). A wrong verdict
 * overstates d by at most 1 on a true tie (called a win) and 2 on a true
 * loss (called a win), and never on a true win, so the overstatement is at
 * most ε·(P(true tie) + 2·P(true loss)) ≤ ε·P(judged) + ε·P(true loss), and
 * P(true loss) ≤ P(verdict loss)/(1 − ε) (a true loss is called one at
 * least 1 − ε of the time). Every judged sample is charged ε, and a "loss"
 * another ε/(1 − ε):
 *   d̲ = 0 (same), 1 − ε (win), −ε (tie), −1 − ε − ε/(1 − ε) (loss).
 * A judge whose errors all favour the candidate (every error on a true
 * loss a "win") is covered; one that errs more often on some kind of pair
 * than ε is not: ε must bound the worst kind. ε is a measured rate: pass an
 * upper confidence bound of it. A later, larger ε only lowers every value,
 * so re-deciding the same evidence with an updated ε stays valid (the
 * ranges below do not depend on ε).
 *
 * R's quality E[r]. A grade g of R's reply gives r̲ = g − δ (δ bounds the
 * grade's error). Without a grade only the verdict says anything: "loss"
 * means R was right (r̲ = 1 − ε), "win" that R was wrong (r̲ = −ε); an
 * agreement or a tie may be both right or both wrong, so it gets the
 * assumption `ungradedRequestedRight` (κ; r̲ = κ on same, κ − ε on tie).
 * Which direction is safe: for the bar (and shares), a LOWER bound on E[r]
 * is needed, since a larger E[r] only adds slack. Counting agreements as
 * "both right" would overstate E[r] by P(both wrong and agree) (on
 * multiple-choice questions a third of the joint mistakes agree), and so
 * certify too much. Counting them as "both wrong" (κ = 0, the default) never
 * overstates it: with no grades at all the bound rests on the losses only,
 * and a candidate mostly passes when it is about as good as R (E[d] ≈ 0).
 * Grades make the bound tight: a workload whose calls can be graded
 * (reference answers, checks, a grading judge on a sample) should grade R on
 * every sampled call, since an ungraded agreement counts κ in place of its
 * true r. κ > 0 is an assumption the certificate must record.
 * When grading every call costs too much, the router may grade a RANDOM
 * share of the agreements (a grading judge on one reply grades both) and set
 * `agreementGradesSampled`: E[r] is then split as
 *   E[r] = E[r·1{not same}] + P(same)·E[r | same]
 * and bounded by L_A + max(0, L_B)·max(0, L_C) (each at a third of the α
 * for E[r]; a product of non-negative lower bounds is one of the product),
 * with A = r̲ on disagreements and 0 on agreements, B = 1{same}, and C the
 * graded agreements' r̲ alone. Valid only if which agreements get a grade
 * does not depend on their content (a check that applies to some calls
 * only is not a random sample): the caller asserts it.
 * `requestedQualityBounds` also gives an UPPER bound (ungraded agreements
 * counted right), for the uses where overstating E[r] is the safe side
 * (a bar above 1, display).
 *
 * ## Per-call policies (issue 37 item 3)
 * A policy π(x) ∈ {0, 1} sends call x to C. Its quality is
 *   E[π c + (1 − π) r] = E[r] + E[π·d],
 * so it passes when E[π·d] + (1 − bar)·E[r] ≥ 0: the same test on values
 * π·d̲ + (1 − bar)·r̲, on held-out calls (evidence the policy was not trained
 * on), split into those the policy sends (`routed`) and keeps (`kept`). A
 * whole candidate is the policy that sends everything. Certify one policy
 * per held-out stream, fixed before it is read: choosing among many on the
 * same stream is as many tests (split α between them).
 */
import { certifiesMeanAbove, meanLowerBound, meanUpperBound, type MeanRange, type WeightedValue } from './bounded-mean-sequence.js';

export type PairedOutcome = 'same' | 'win' | 'loss' | 'tie';

export interface PairedSample {
  outcome: PairedOutcome;
  /** R's reply graded on its own: right (true) or wrong (false); absent when nothing graded it. */
  requestedRight?: boolean;
}

type Grade = 'right' | 'wrong' | 'ungraded';

/** Counts of paired samples by outcome and grade of R's reply: order does not matter (bounded-mean-sequence.ts), so this is the whole state. */
export type PairedEvidence = Readonly<Record<PairedOutcome, Readonly<Record<Grade, number>>>>;

/** Held-out evidence on a per-call policy: the samples it would send to the candidate, and the rest. */
export interface PolicyEvidence {
  routed: PairedEvidence;
  kept: PairedEvidence;
}

/** What the evidence is worth: error rates and the assumption about ungraded agreements. All default to 0. */
export interface EvidenceErrors {
  /** Upper bound on the probability that a judge's verdict on a disagreement is wrong; at most `MAX_ERROR_RATE`. */
  judgeError?: number;
  /** Upper bound on the probability that a grade of R's reply is wrong; at most `MAX_ERROR_RATE`. */
  gradeError?: number;
  /** κ: assumed lower bound on P(R right) on an ungraded agreement or tie. 0 assumes nothing (see the file comment). */
  ungradedRequestedRight?: number;
  /** The graded agreements are a random sample of the agreements: estimate E[r | same] from them (see the file comment). */
  agreementGradesSampled?: boolean;
}

export interface QualityBarContract extends EvidenceErrors {
  /** C passes when E[c] ≥ qualityBar · E[r]; in (0, 1] (0.95 by default in the contract). */
  qualityBar: number;
  /** Level of the anytime-valid bounds, e.g. 0.95. */
  confidence: number;
  /** No pass (and no share) before this many paired samples. */
  minSamples?: number;
}

export interface QualityBarVerdict {
  passes: boolean;
  /** Anytime-valid lower bound on E[c] − bar·E[r] (of the policy when it is one); ≥ 0 when it passes, up to the search tolerance. */
  marginLower: number;
  samples: number;
}

/**
 * The largest judge or grader error rate accepted; the value ranges below
 * rely on it. A wider range would cost power on every decision (the bets
 * scale with it), and a judge wrong more often is worth little anyway: its
 * charge ε·P(disagree) soon exceeds the slack (1 − bar)·E[r] (at 0.3
 * disagreements and E[r] = 0.8, from ε ≈ 0.13 at a bar of 0.95).
 */
export const MAX_ERROR_RATE = 0.1;

/** Ranges of d̲ and r̲ for every allowed error rate, so that they do not move when an error rate is re-measured. */
export const DIFF_RANGE: MeanRange = { min: -1 - MAX_ERROR_RATE - MAX_ERROR_RATE / (1 - MAX_ERROR_RATE), max: 1 };
export const REQUESTED_RANGE: MeanRange = { min: -MAX_ERROR_RATE, max: 1 };
/** Range of the upper-bound proxy of r (ungraded agreements counted right, a "wrong" grade may be wrong). */
const REQUESTED_UPPER_RANGE: MeanRange = { min: 0, max: 1 + MAX_ERROR_RATE };

const OUTCOMES: readonly PairedOutcome[] = ['same', 'win', 'loss', 'tie'];
const GRADES: readonly Grade[] = ['right', 'wrong', 'ungraded'];

export function emptyPairedEvidence(): PairedEvidence {
  const counts = (): Record<Grade, number> => ({ right: 0, wrong: 0, ungraded: 0 });
  return { same: counts(), win: counts(), loss: counts(), tie: counts() };
}

/** The evidence after `count` more samples like `sample` (pure). */
export function recordPairedSample(evidence: PairedEvidence, sample: PairedSample, count = 1): PairedEvidence {
  if (!(Number.isInteger(count) && count >= 0)) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  const grade: Grade = sample.requestedRight === undefined ? 'ungraded' : sample.requestedRight ? 'right' : 'wrong';
  const cell = evidence[sample.outcome];
  return { ...evidence, [sample.outcome]: { ...cell, [grade]: cell[grade] + count } };
}

export function pairedSampleCount(evidence: PairedEvidence): number {
  let total = 0;
  for (const outcome of OUTCOMES) for (const grade of GRADES) total += evidence[outcome][grade];
  return total;
}

/** One kind of sample: how many, and its values d̲ (as the policy serves it) and r̲. */
export interface SampleValues {
  count: number;
  diff: number;
  requested: number;
  /** The replies agreed ("same"). */
  agreement: boolean;
  /** R's reply carried a grade. */
  graded: boolean;
}

/**
 * d̲ and r̲ for every kind of sample in the evidence (see the file comment);
 * a kept sample's d̲ is 0, R serves it. Exported for workload-shares.ts.
 */
export function sampleValues(evidence: PolicyEvidence, errors: EvidenceErrors = {}): SampleValues[] {
  const { judgeError, gradeError, ungradedRequestedRight } = resolveErrors(errors);
  const verdictDiff: Record<PairedOutcome, number> = {
    same: 0,
    win: 1 - judgeError,
    tie: -judgeError,
    loss: -1 - judgeError - judgeError / (1 - judgeError),
  };
  const judgeCharge = (outcome: PairedOutcome): number => (outcome === 'same' ? 0 : judgeError);
  const verdictRequested: Record<PairedOutcome, number> = { same: ungradedRequestedRight, tie: ungradedRequestedRight, win: 0, loss: 1 };
  const values: SampleValues[] = [];
  for (const [routed, side] of [
    [true, evidence.routed],
    [false, evidence.kept],
  ] as const) {
    for (const outcome of OUTCOMES) {
      for (const grade of GRADES) {
        const count = side[outcome][grade];
        if (count === 0) continue;
        const requested =
          grade === 'ungraded' ? verdictRequested[outcome] - judgeCharge(outcome) : (grade === 'right' ? 1 : 0) - gradeError;
        values.push({
          count,
          diff: routed ? verdictDiff[outcome] : 0,
          requested,
          agreement: outcome === 'same',
          graded: grade !== 'ungraded',
        });
      }
    }
  }
  return values;
}

/**
 * Anytime-valid lower bound on R's quality E[r] at `confidence` (one-sided):
 * per-sample values r̲, or the split by agreement when the contract says the
 * graded agreements are a random sample.
 */
export function requestedQualityLower(evidence: PairedEvidence, confidence: number, errors: EvidenceErrors = {}): number {
  const values = sampleValues({ routed: evidence, kept: emptyPairedEvidence() }, errors);
  if (errors.agreementGradesSampled !== true)
    return meanLowerBound(
      values.map((value) => ({ value: value.requested, count: value.count })),
      REQUESTED_RANGE,
      confidence,
    );
  const third = 1 - (1 - confidence) / 3;
  const disagreements = values.map((value) => ({ value: value.agreement ? 0 : value.requested, count: value.count }));
  const agreements = evidence.same.right + evidence.same.wrong + evidence.same.ungraded;
  const agreementShare = [
    { value: 1, count: agreements },
    { value: 0, count: pairedSampleCount(evidence) - agreements },
  ];
  const gradedAgreements = values
    .filter((value) => value.agreement && value.graded)
    .map((value) => ({ value: value.requested, count: value.count }));
  return (
    meanLowerBound(disagreements, REQUESTED_RANGE, third) +
    Math.max(0, meanLowerBound(agreementShare, { min: 0, max: 1 }, third)) *
      Math.max(0, meanLowerBound(gradedAgreements, REQUESTED_RANGE, third))
  );
}

/**
 * Anytime-valid bounds on E[r], each one-sided at α/2 (both hold at once with
 * probability ≥ `confidence`). The upper bound counts ungraded agreements
 * and ties right and adds the judge's and grader's possible errors back.
 */
export function requestedQualityBounds(
  evidence: PairedEvidence,
  confidence: number,
  errors: EvidenceErrors = {},
): { lower: number; upper: number } {
  const { judgeError, gradeError } = resolveErrors(errors);
  const sided = 1 - (1 - confidence) / 2;
  const upperTally: WeightedValue[] = [];
  for (const outcome of OUTCOMES) {
    for (const grade of GRADES) {
      const count = evidence[outcome][grade];
      if (count === 0) continue;
      // A wrong "win" may hide a right R: every judged sample carries the charge.
      const verdictCeiling = outcome === 'win' ? 0 : 1;
      const value =
        grade === 'ungraded' ? verdictCeiling + (outcome === 'same' ? 0 : judgeError) : (grade === 'right' ? 1 : 0) + gradeError;
      upperTally.push({ value, count });
    }
  }
  return { lower: requestedQualityLower(evidence, sided, errors), upper: meanUpperBound(upperTally, REQUESTED_UPPER_RANGE, sided) };
}

/** Whether the candidate's quality is certified ≥ bar × R's: the policy that sends every call. */
export function passesQualityBar(evidence: PairedEvidence, contract: QualityBarContract): QualityBarVerdict {
  return certifyPolicy({ routed: evidence, kept: emptyPairedEvidence() }, contract);
}

/**
 * Whether a per-call policy's quality is certified ≥ bar × R's, on held-out
 * evidence: one bound on the mean of π·d̲ + (1 − bar)·r̲ at the full α. With
 * `agreementGradesSampled`, E[r] is bounded apart, so the margin is
 * L(π·d̲) + (1 − bar)·max(0, L_r) with α/2 each.
 */
export function certifyPolicy(evidence: PolicyEvidence, contract: QualityBarContract): QualityBarVerdict {
  checkContract(contract);
  const slack = 1 - contract.qualityBar;
  const values = sampleValues(evidence, contract);
  const samples = pairedSampleCount(evidence.routed) + pairedSampleCount(evidence.kept);
  const enough = samples >= (contract.minSamples ?? 0);
  if (contract.agreementGradesSampled === true) {
    const sided = 1 - (1 - contract.confidence) / 2;
    const diffLower = meanLowerBound(
      values.map((value) => ({ value: value.diff, count: value.count })),
      DIFF_RANGE,
      sided,
    );
    const marginLower =
      diffLower + slack * Math.max(0, requestedQualityLower(mergeEvidence(evidence.routed, evidence.kept), sided, contract));
    return { passes: enough && marginLower >= 0, marginLower, samples };
  }
  const tally = values.map((value) => ({ value: value.diff + slack * value.requested, count: value.count }));
  const range = marginRange(1, contract.qualityBar);
  const certified = certifiesMeanAbove(tally, range, 0, contract.confidence);
  return { passes: enough && certified, marginLower: meanLowerBound(tally, range, contract.confidence), samples };
}

/** The evidence with every grade forgotten (a grader found too unreliable): each sample counts as ungraded. */
export function withoutGrades(evidence: PairedEvidence): PairedEvidence {
  const ungraded = (cell: Readonly<Record<Grade, number>>) => ({ right: 0, wrong: 0, ungraded: cell.right + cell.wrong + cell.ungraded });
  return { same: ungraded(evidence.same), win: ungraded(evidence.win), loss: ungraded(evidence.loss), tie: ungraded(evidence.tie) };
}

/** The counts of two streams of paired samples together (e.g. a policy's routed and kept samples, for E[r]). */
export function mergeEvidence(left: PairedEvidence, right: PairedEvidence): PairedEvidence {
  let merged = left;
  for (const outcome of OUTCOMES) {
    for (const grade of GRADES) {
      const requestedRight = grade === 'ungraded' ? undefined : grade === 'right';
      merged = recordPairedSample(merged, requestedRight === undefined ? { outcome } : { outcome, requestedRight }, right[outcome][grade]);
    }
  }
  return merged;
}

/** Range of share·d̲ + (1 − bar)·r̲: fixed by the share and the bar alone. */
export function marginRange(share: number, qualityBar: number): MeanRange {
  const slack = 1 - qualityBar;
  return { min: share * DIFF_RANGE.min + slack * REQUESTED_RANGE.min, max: share * DIFF_RANGE.max + slack * REQUESTED_RANGE.max };
}

export function checkContract(contract: QualityBarContract): void {
  if (!(contract.qualityBar > 0 && contract.qualityBar <= 1))
    throw new RangeError(`qualityBar must be in (0, 1], got ${contract.qualityBar}`);
  if (!(contract.confidence > 0 && contract.confidence < 1))
    throw new RangeError(`confidence must be in (0, 1), got ${contract.confidence}`);
  resolveErrors(contract);
}

function resolveErrors(errors: EvidenceErrors): Required<Omit<EvidenceErrors, 'agreementGradesSampled'>> {
  const resolved = {
    judgeError: errors.judgeError ?? 0,
    gradeError: errors.gradeError ?? 0,
    ungradedRequestedRight: errors.ungradedRequestedRight ?? 0,
  };
  for (const name of ['judgeError', 'gradeError'] as const) {
    if (!(resolved[name] >= 0 && resolved[name] <= MAX_ERROR_RATE))
      throw new RangeError(`${name} must be in [0, ${MAX_ERROR_RATE}], got ${resolved[name]}`);
  }
  if (!(resolved.ungradedRequestedRight >= 0 && resolved.ungradedRequestedRight <= 1))
    throw new RangeError(`ungradedRequestedRight must be in [0, 1], got ${resolved.ungradedRequestedRight}`);
  return resolved;
}
