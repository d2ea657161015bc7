import { describe, expect, it } from 'vitest';
import {
  ClientAbortError,
  EngineError,
  EngineOverloadedError,
  EngineTimeoutError,
  EngineUnavailableError,
  InvalidRequestError,
} from '../api/errors.js';
import { outcomeOf } from './call-outcome.js';

const live = (): AbortSignal => new AbortController().signal;

describe('outcomeOf', () => {
  it('counts retryable errors and non-gateway errors against the replica', () => {
    for (const error of [new EngineError('5xx'), new EngineUnavailableError('down'), new EngineTimeoutError('slow'), new Error('bug')]) {
      expect(outcomeOf(error, live())).toBe('failure');
    }
  });

  it('takes a rejected request as proof the replica is healthy', () => {
    expect(outcomeOf(new InvalidRequestError('too long'), live())).toBe('success');
  });

  it('says nothing about the replica for a client gone away, a busy replica, or an aborted call', () => {
    expect(outcomeOf(new ClientAbortError(), live())).toBe('release');
    expect(outcomeOf(new EngineOverloadedError('busy', 1), live())).toBe('release');
    const controller = new AbortController();
    controller.abort();
    expect(outcomeOf(new EngineError('closed'), controller.signal)).toBe('release');
  });
});
