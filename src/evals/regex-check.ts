/**
 * `regex`: the reply's trimmed content matches the pattern. `test` semantics:
 * the pattern may match anywhere, so a contract anchors it (`^(yes|no)$`) to
 * mean the whole reply. Reference-free, so it also runs in the inline guard.
 * The pattern was compiled when the contract was parsed; V8 caches compiled
 * patterns by source and flags, so building the RegExp per call is cheap.
 */
import type { EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type SyncEvaluator } from './evaluator.js';
import { contentForCheck } from './reply-shape.js';

export const evaluateRegex: SyncEvaluator<EvalCheckOf<'regex'>> = (check, { candidate }) => {
  const content = contentForCheck(candidate);
  if (typeof content !== 'string') return content;
  let pattern: RegExp;
  try {
    pattern = new RegExp(check.pattern, check.flags);
  } catch (error) {
    // Only a contract that skipped parseEvalContract gets here.
    return notApplicable(`the pattern does not compile (${(error as Error).message})`);
  }
  if (pattern.test(content.trim())) return pass;
  return fail(`content does not match /${check.pattern}/${check.flags ?? ''}: ${excerpt(content)}`);
};
