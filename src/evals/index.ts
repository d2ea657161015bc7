/** The evals part: eval contracts, the evaluators that apply them, and the judge pick. */
export {
  DEFAULT_CONTRACT,
  checksKey,
  isAbsoluteCheck,
  parseEvalContract,
  qualitySemantics,
  qualitySemanticsDetail,
  validateEvalContract,
  type AgreementMethod,
  type EvalCheck,
  type EvalCheckOf,
  type EvalContract,
  type EvalContractIssue,
  type EvalContractValidation,
  type QualitySemantics,
} from './eval-contract.js';
export type { EvalInput, EvalOutcome, JudgeContext, JudgeRunner } from './evaluator.js';
export { evaluateContract, guardChecks, type ContractResult, type EvaluateOptions } from './evaluate-contract.js';
export { chooseJudge, pickJudgeModel, type JudgeChoice, type JudgeOption } from './pick-judge-model.js';
export { agreementMethodFor, needsPairwiseJudge, normalizeText } from './agreement-check.js';
export { evaluatePairwiseJudge } from './judge-check.js';
export { JUDGE_MAX_TOKENS } from './judge-prompts.js';
