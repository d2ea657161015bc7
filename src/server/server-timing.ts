/**
 * The `Server-Timing` header of a chat reply (W3C Server Timing): where the
 * time before the reply's head went. `gateway` is taskgate's own part (reading
 * and checking the request, key, limits, routing, writing the reply), and
 * `upstream` the wait on engines: the whole reply for a JSON call, the first
 * upstream chunk for a stream, whose head leaves before the rest is generated.
 * Browsers' developer tools and most HTTP tracing show it as is.
 */
export function serverTiming(gatewayMs: number, upstreamMs: number): string {
  return `gateway;dur=${gatewayMs.toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`;
}
