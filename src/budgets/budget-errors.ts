/**
 * What a call that a budget stops gets: 429 `budget_exceeded` when a cap
 * refused its reservation (a spend cap is a rate limit over money, and the
 * OpenAI SDKs know to wait and retry a 429 after `retry-after`), and 503
 * `budget_unavailable` when the shared ledger does not answer and
 * `budgets.on_outage` is "closed". Never a 500: the request was fine.
 */
import { GatewayError } from '../api/errors.js';
import { formatUsd, type Cap } from './budget-caps.js';

/** 429: the call's worst case would take a cap past its limit. */
export class BudgetExceededError extends GatewayError {
  /** The cap that refused. */
  readonly cap: Cap;

  /**
   * `now` (epoch ms) dates the `retry-after`: whole seconds until the cap's
   * period resets (at least 1). `spentMicros` and `amountMicros`, when given,
   * say how far the call was from fitting.
   */
  constructor(cap: Cap, now: number, detail: { spentMicros: number; amountMicros: number } | null = null) {
    const retryAfterSeconds = Math.max(1, Math.ceil((cap.resetsAt - now) / 1000));
    const resets = new Date(cap.resetsAt).toISOString();
    const why =
      detail === null
        ? ''
        : ` ${formatUsd(Math.max(0, cap.limitMicros - detail.spentMicros))} of it is left, less than this call's worst case of ${formatUsd(detail.amountMicros)}.`;
    super(`Budget exceeded: this call would pass the ${cap.label}.${why} It resets at ${resets}.`, {
      status: 429,
      code: 'budget_exceeded',
      type: 'rate_limit_error',
      retryable: true,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
    this.cap = cap;
  }
}

/** 503: budgets cannot be checked now (the shared ledger does not answer) and the config says to refuse meanwhile. */
export class BudgetUnavailableError extends GatewayError {
  constructor(cause?: unknown) {
    super(
      'Spend budgets cannot be checked right now (budgets.on_outage is "closed"), so calls covered by a budget are refused. Retry in a few seconds.',
      {
        status: 503,
        code: 'budget_unavailable',
        type: 'server_error',
        retryable: true,
        headers: { 'retry-after': '5' },
        cause,
      },
    );
  }
}
