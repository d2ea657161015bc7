/** The evals part: eval contracts, the evaluators that apply them, and the judge pick. */
export {
  DEFAULT_CONTRACT,
  parseEvalContract,
  validateEvalContract,
  type AgreementMethod,
  type EvalCheck,
  type EvalCheckOf,
  type EvalContract,
  type EvalContractIssue,
  type EvalContractValidation,
} from './eval-contract.js';
export type { EvalInput, EvalOutcome, JudgeRunner } from './evaluator.js';
export { evaluateContract, guardChecks, type ContractResult, type EvaluateOptions } from './evaluate-contract.js';
export { pickJudgeModel, type JudgeOption } from './pick-judge-model.js';
export { agreementMethodFor, normalizeText } from './agreement-check.js';
