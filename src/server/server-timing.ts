/**
 * The `Server-Timing` header of a chat reply (W3C Server Timing): where the
 * time before the reply's head went. `gateway` is taskgate's own part (reading
 * and checking the request, key, limits, routing, writing the reply), and
 * `upstream` the wait on engines: the whole reply for a JSON call, the first
 * upstream chunk for a stream, whose head leaves before the rest is generated.
 * Browsers' developer tools and most HTTP tracing show it as is.
 */
export function serverTiming(gatewayMs: number, upstreamMs: number): string {
  return `gateway;dur=${twoDecimals(gatewayMs)}, upstream;dur=${twoDecimals(upstreamMs)}`;
}

/**
 * A duration in milliseconds with two decimals from integers: V8 caches
 * small integers' text, while `toFixed` formats in the runtime every time
 * (measured: docs/benchmarks.md). It matches `toFixed(2)` except on exact
 * half-hundredths, which it rounds up (0.015 -> 0.02, `toFixed` 0.01).
 */
export function twoDecimals(milliseconds: number): string {
  const hundredths = Math.round(Math.max(0, milliseconds) * 100);
  const whole = Math.floor(hundredths / 100);
  const rest = hundredths - whole * 100;
  return `${whole}.${rest < 10 ? '0' : ''}${rest}`;
}
