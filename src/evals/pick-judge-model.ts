/**
 * Which model judges a candidate. Models of one family share training data
 * and blind spots, and a judge favours its own family's replies, so a judge of
 * another family than the candidate is preferred. Among those, the strongest,
 * taken as the most expensive per call (the catalog has no better measure of
 * strength); the caller lists the requested model among the options, so it
 * can judge the cheaper models it is compared with.
 *
 * `chooseJudge` falls back to the candidate's own family when no other is
 * available (a same-family judge is better than none; the routes view flags
 * it). `pickJudgeModel` is the older, strict form: another family or nothing.
 */

export interface JudgeOption {
  id: string;
  family: string;
  /** Expected USD per judge call; a model without it ranks below every priced one. */
  costPerCall?: number;
}

export interface JudgeChoice {
  model: string;
  /** The judge is of the candidate's family: allowed, but its verdicts deserve less trust. */
  sameFamily: boolean;
}

/** Families compare without case or surrounding spaces ("Qwen2.5" is "qwen2.5"). */
function isSameFamily(left: string, right: string): boolean {
  return left.trim().toLowerCase() === right.trim().toLowerCase();
}

/** The most expensive option; among equals the first listed, so the pick is stable. */
function strongest(options: readonly JudgeOption[]): JudgeOption | null {
  let best: JudgeOption | null = null;
  for (const option of options) {
    if (best === null || (option.costPerCall ?? -1) > (best.costPerCall ?? -1)) best = option;
  }
  return best;
}

/**
 * The judge for a candidate of `candidateFamily`, or null when nothing is
 * available. A `preferred` model that is available wins, whatever its family
 * (the contract named it); one that is unavailable is passed over, not an
 * error: the contract names one judge for every candidate.
 */
export function chooseJudge(candidateFamily: string, available: readonly JudgeOption[], preferred?: string): JudgeChoice | null {
  const named = preferred === undefined ? undefined : available.find((option) => option.id === preferred);
  const chosen = named ?? strongest(available.filter((option) => !isSameFamily(option.family, candidateFamily))) ?? strongest(available);
  return chosen === null ? null : { model: chosen.id, sameFamily: isSameFamily(chosen.family, candidateFamily) };
}

/**
 * The judge's id, or null when no available model is of another family. A
 * preferred model that is unavailable or of the candidate's family is passed
 * over, not an error.
 */
export function pickJudgeModel(candidateFamily: string, available: readonly JudgeOption[], preferred?: string): string | null {
  const eligible = available.filter((option) => !isSameFamily(option.family, candidateFamily));
  return chooseJudge(candidateFamily, eligible, preferred)?.model ?? null;
}
