/** Plain words for why an HTTP transfer failed, for messages a person reads. */

const knownCodes: Record<string, string> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name lookup failed',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no reply for too long',
  UND_ERR_BODY_TIMEOUT: 'no data for too long',
  UND_ERR_SOCKET: 'the other side closed the connection',
};

/**
 * fetch rejects with `TypeError: fetch failed` and hides the reason in
 * `cause` (sometimes an AggregateError of one error per address tried): this
 * digs out the system error code when there is one, else the innermost message.
 */
export function describeNetworkFailure(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  let innermost = error instanceof Error ? error.message : String(error);
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code in knownCodes) return `${knownCodes[code]} (${code})`;
    if (current.message !== '') innermost = current.message;
    current = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
  }
  return innermost;
}

export function httpStatusMessage(url: string, status: number, statusText: string): string {
  const reply = `${new URL(url).host} answered ${status}${statusText === '' ? '' : ` ${statusText}`} for ${url}`;
  if (status === 404) return `${reply}: there is no file at that address; check the URL (or that the mirror mirrors it)`;
  if (status === 401 || status === 403)
    return `${reply}: the file needs authorization (a gated repository?); fetch it yourself and pass the local file path`;
  if (status === 429) return `${reply}: too many requests; try again later`;
  if (status >= 500) return `${reply}: a server error; try again later`;
  return reply;
}
