import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBodyByEvents } from '../server/read-body.js';
import { bufferedBody } from './buffered-body.js';

/** A request whose parser has buffered `parts` (without their end), with this content-length. */
function requestWith(contentLength: string | undefined, parts: Buffer[]): IncomingMessage {
  const request = new IncomingMessage(new Socket());
  if (contentLength !== undefined) request.headers['content-length'] = contentLength;
  for (const part of parts) request.push(part);
  return request;
}

/** `bytes` cut at these places (any byte, so inside a multibyte character too). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const places = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const place of [...places, bytes.length]) {
    if (place > from) parts.push(bytes.subarray(from, place));
    from = Math.max(from, place);
  }
  return parts;
}

/** The plain version: the same body read through its 'data' and 'end' events. */
async function byEvents(contentLength: string | undefined, parts: Buffer[]): Promise<string> {
  const request = requestWith(contentLength, []);
  const reading = readBodyByEvents(request, { maxBytes: 1 << 20, timeoutMs: 0 });
  for (const part of parts) request.push(part);
  request.push(null);
  return reading;
}

describe('bufferedBody against reading the body by its events (differential)', () => {
  it('gives the text the events give, for generated bodies cut anywhere into packets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (text, cuts) => {
          const bytes = Buffer.from(text, 'utf8');
          const parts = split(bytes, cuts);
          const length = String(bytes.length);
          const taken = bufferedBody(requestWith(length, parts));
          expect(taken).toBeDefined();
          expect(taken).toBe(await byEvents(length, parts));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('takes nothing unless every declared byte is buffered: a body still arriving, one with no or a zero length, a length that is not a number', () => {
    const body = Buffer.from('{"model":"m"}');
    expect(bufferedBody(requestWith(String(body.length + 1), [body]))).toBeUndefined();
    expect(bufferedBody(requestWith(String(body.length), [body.subarray(0, 5)]))).toBeUndefined();
    expect(bufferedBody(requestWith(undefined, [body]))).toBeUndefined();
    expect(bufferedBody(requestWith('0', []))).toBeUndefined();
    expect(bufferedBody(requestWith('twelve', [body]))).toBeUndefined();
    expect(bufferedBody(requestWith(String(body.length), [body]))).toBe('{"model":"m"}');
  });
});
