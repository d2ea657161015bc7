/**
 * The `input` of a custom tool call, from the function arguments an engine
 * wrote for it. Engines see a custom tool as a function taking one string
 * (`{"input": "…"}`); callers get `{type: "custom", custom: {name, input}}`.
 *
 * `customInput` reads whole arguments. `CustomInputDecoder` reads them as an
 * engine streams them, JSON text cut anywhere, even inside an escape, so the
 * input can be streamed piece by piece as OpenAI streams it: `push` takes the
 * next piece of arguments and returns the input's text it made certain, `end`
 * whatever is left once the call is complete. Together they give what
 * `customInput` gives for the whole arguments:
 *   - `{"input": "…"}` (whitespace wherever JSON allows it): the string,
 *     decoded as it comes; what follows its closing quote is not read;
 *   - text that does not start with `{`: the model wrote the input plainly,
 *     and it is passed on as it comes;
 *   - any other object (another key first, `input` not a string): held, and
 *     given whole by `end`, as the text itself.
 * A call cut short (finish reason `length`) gives its input as far as it came.
 */

/** The `input` of a custom call from its function arguments; text that is not `{"input": "…"}` is taken as the input itself. */
export function customInput(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { input?: unknown }).input === 'string') {
      return (parsed as { input: string }).input;
    }
  } catch {
    // Not JSON: the model wrote the input plainly.
  }
  return argumentsText;
}

type Mode = 'start' | 'key' | 'string' | 'after' | 'plain' | 'held';

/** What must follow the `{` of `{"input": "`, each part after optional whitespace. */
const keyParts = ['"input"', ':', '"'];
const escapes: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export class CustomInputDecoder {
  private mode: Mode = 'start';
  /** The arguments so far, and how far they have been read. */
  private text = '';
  private at = 0;
  /** In `key` mode: the part being matched, and how much of it has matched. */
  private part = 0;
  private partAt = 0;
  /** A high surrogate held back until its low half comes (a client joining the two pieces in UTF-8 would break the character). */
  private surrogate = '';

  push(piece: string): string {
    if (this.mode === 'plain') return piece;
    if (this.mode === 'after') return '';
    this.text += piece;
    const mode = this.readOpening();
    if (mode === 'plain') {
      // Leading whitespace included: it is part of a plainly written input.
      const all = this.text;
      this.text = '';
      return all;
    }
    return mode === 'string' ? this.readString() : '';
  }

  end(): string {
    if (this.mode === 'start' || this.mode === 'key' || this.mode === 'held') return customInput(this.text);
    if (this.mode === 'string') return this.surrogate;
    return '';
  }

  /** Reads on to the input's first character, if it has come; the mode that leaves. */
  private readOpening(): Mode {
    if (this.mode === 'start') this.readStart();
    if (this.mode === 'key') this.readKey();
    return this.mode;
  }

  private readStart(): void {
    while (this.at < this.text.length && isJsonSpace(this.text[this.at]!)) this.at += 1;
    if (this.at === this.text.length) return;
    if (this.text[this.at] === '{') {
      this.at += 1;
      this.mode = 'key';
    } else {
      this.mode = 'plain';
    }
  }

  private readKey(): void {
    while (this.at < this.text.length) {
      const char = this.text[this.at]!;
      const expected = keyParts[this.part]!;
      if (this.partAt === 0 && isJsonSpace(char)) {
        this.at += 1;
        continue;
      }
      if (char !== expected[this.partAt]) {
        this.mode = 'held';
        return;
      }
      this.at += 1;
      this.partAt += 1;
      if (this.partAt === expected.length) {
        this.part += 1;
        this.partAt = 0;
        if (this.part === keyParts.length) {
          this.mode = 'string';
          return;
        }
      }
    }
  }

  private readString(): string {
    let decoded = this.surrogate;
    this.surrogate = '';
    const text = this.text;
    while (this.at < text.length) {
      const char = text[this.at]!;
      if (char === '"') {
        this.mode = 'after';
        this.at = text.length;
        break;
      }
      if (char !== '\\') {
        decoded += char;
        this.at += 1;
        continue;
      }
      // An escape: wait for the rest of it if this piece ends inside it.
      const kind = text[this.at + 1];
      if (kind === undefined) break;
      if (kind !== 'u') {
        decoded += escapes[kind] ?? kind;
        this.at += 2;
        continue;
      }
      const hex = text.slice(this.at + 2, this.at + 6);
      if (hex.length < 4) break;
      decoded += /^[0-9a-fA-F]{4}$/.test(hex) ? String.fromCharCode(Number.parseInt(hex, 16)) : `\\u${hex}`;
      this.at += 6;
    }
    // What is read is dropped: the text holds at most an escape cut short.
    this.text = this.text.slice(this.at);
    this.at = 0;
    if (this.mode === 'string') {
      const last = decoded.charCodeAt(decoded.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        this.surrogate = decoded.slice(-1);
        decoded = decoded.slice(0, -1);
      }
    }
    return decoded;
  }
}

function isJsonSpace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\r' || char === '\t';
}
