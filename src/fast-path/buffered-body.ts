/**
 * A request's body taken whole when the parser has already buffered all of
 * it, without the round of `'data'` and `'end'` events (and their ticks) that
 * reading it as a stream takes. A body that came in the same packets as its
 * head usually is buffered by the time the handler has passed one tick after
 * the head (the chat handler awaits its rate limit for that reason). Measured:
 * docs/benchmarks.md.
 *
 * Invariant: when it gives a text, it is the text reading the body through
 * its events gives (`server/read-body.ts`'s own path), for every body and
 * however it was split into packets (`buffered-body.test.ts`).
 */
import type { IncomingMessage } from 'node:http';

/** The body as text when every byte its `content-length` declares is buffered; undefined otherwise (read it by its events). */
export function bufferedBody(request: IncomingMessage): string | undefined {
  const declaredHeader = request.headers['content-length'];
  const declared = declaredHeader === undefined ? -1 : Number(declaredHeader);
  if (!(declared > 0) || request.readableLength !== declared) return undefined;
  const whole = request.read() as Buffer | null;
  return whole === null ? undefined : whole.toString('utf8');
}
