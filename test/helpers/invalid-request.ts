import { InvalidRequestError } from '../../src/api/errors.js';

/** The 400 that `run` throws; fails the test when it throws nothing or something else. */
export function invalidRequestOf(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error('expected a 400 (an InvalidRequestError), nothing was thrown');
}
