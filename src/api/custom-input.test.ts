import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CustomInputDecoder, customInput } from './custom-input.js';

/** The text cut at these places (any order, repeats ignored). */
function cutAt(text: string, cuts: number[]): string[] {
  const places = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const place of places) {
    pieces.push(text.slice(from, place));
    from = place;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/** What the decoder gives, piece by piece, then at the end. */
function decode(pieces: string[]): string[] {
  const decoder = new CustomInputDecoder();
  return [...pieces.map((piece) => decoder.push(piece)), decoder.end()];
}

/** As Python's json.dumps writes it: every character beyond ASCII as \uXXXX, surrogate pairs as two. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const cuts = fc.array(fc.nat(), { maxLength: 20 });

describe('customInput', () => {
  it('takes the input string out of the arguments, or the text itself', () => {
    expect(customInput('{"input":"a\\nb"}')).toBe('a\nb');
    expect(customInput('{"query":"x"}')).toBe('{"query":"x"}');
    expect(customInput('{"input":5}')).toBe('{"input":5}');
    expect(customInput('SELECT 1')).toBe('SELECT 1');
  });
});

describe('CustomInputDecoder', () => {
  it('gives the input of {"input": "…"} arguments, however they are written and cut, never half a character', () => {
    const written = fc.constantFrom(
      (input: string) => JSON.stringify({ input }),
      (input: string) => JSON.stringify({ input }, null, 2),
      (input: string) => `\n { "input"\t:  ${asciiJson(input)} , "other": [1] }`,
      (input: string) => asciiJson({ input }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), written, cuts, (input, write, at) => {
        const text = write(input);
        const pieces = decode(cutAt(text, at));
        expect(pieces.join('')).toBe(input);
        expect(pieces.join('')).toBe(customInput(text));
        // No piece ends in the first half of a surrogate pair (a character beyond the BMP) whose second half is in the next.
        let offset = 0;
        for (const piece of pieces) {
          offset += piece.length;
          const last = piece.charCodeAt(piece.length - 1);
          const next = input.charCodeAt(offset);
          expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false);
        }
      }),
    );
  });

  it('gives what customInput gives for any other JSON, whole at the end', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('', ' ', '\n\t'), cuts, (value, space, at) => {
        const text = space + JSON.stringify(value);
        expect(decode(cutAt(text, at)).join('')).toBe(customInput(text));
      }),
    );
  });

  it('passes an input written plainly on as it comes', () => {
    fc.assert(
      fc.property(
        fc.string().filter((text) => !text.trimStart().startsWith('{')),
        cuts,
        (text, at) => {
          const pieces = cutAt(text, at);
          const decoded = decode(pieces);
          expect(decoded.join('')).toBe(text);
          // Once the first character that is not a space has come, each piece goes out as it is.
          const first = pieces.findIndex((piece) => piece.trim() !== '');
          if (first !== -1) expect(decoded.slice(first + 1, -1)).toEqual(pieces.slice(first + 1));
        },
      ),
    );
  });

  it('gives each piece of the input as soon as it is certain', () => {
    const decoder = new CustomInputDecoder();
    expect(decoder.push(' {"in')).toBe('');
    expect(decoder.push('put": "a')).toBe('a');
    expect(decoder.push('\\')).toBe('');
    expect(decoder.push('n\\u00')).toBe('\n');
    expect(decoder.push('e9\\ud83d')).toBe('é');
    expect(decoder.push('\\ude00!')).toBe('😀!');
    expect(decoder.push('", "input": "again"}')).toBe('');
    expect(decoder.end()).toBe('');
  });

  it('gives a call cut short as far as its input came', () => {
    const decoder = new CustomInputDecoder();
    expect(decoder.push('{"input":"SELECT * FR')).toBe('SELECT * FR');
    expect(decoder.end()).toBe('');
  });
});
