/** Why a signal aborted, as the error a cancelled request fails with: an `AbortError` unless its owner gave a reason. */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason });
}
