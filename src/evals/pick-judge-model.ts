/**
 * Which model judges a candidate. Models of one family share training data
 * and blind spots, and a judge favours its own family's replies, so the judge
 * is always of another family than the candidate. Among those, the contract's
 * preferred judge wins; else the strongest, taken as the most expensive per
 * call (the catalog has no better measure of strength).
 */

export interface JudgeOption {
  id: string;
  family: string;
  /** Expected USD per judge call; a model without it ranks below every priced one. */
  costPerCall?: number;
}

/** Families compare without case or surrounding spaces ("Qwen2.5" is "qwen2.5"). */
function sameFamily(left: string, right: string): boolean {
  return left.trim().toLowerCase() === right.trim().toLowerCase();
}

/**
 * The judge's id, or null when no available model is of another family. A
 * preferred model that is unavailable or of the candidate's family is passed
 * over, not an error: the contract names one judge for every candidate.
 */
export function pickJudgeModel(candidateFamily: string, available: readonly JudgeOption[], preferred?: string): string | null {
  const eligible = available.filter((option) => !sameFamily(option.family, candidateFamily));
  if (preferred !== undefined) {
    const chosen = eligible.find((option) => option.id === preferred);
    if (chosen !== undefined) return chosen.id;
  }
  let best: JudgeOption | null = null;
  for (const option of eligible) {
    // Strictly greater: among equals the first listed wins, so the pick is stable.
    if (best === null || (option.costPerCall ?? -1) > (best.costPerCall ?? -1)) best = option;
  }
  return best?.id ?? null;
}
