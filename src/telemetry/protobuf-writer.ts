/**
 * A protobuf wire-format writer over one growing buffer: the bytes of the
 * spans taskgate exports (`protobuf-span-encoder.ts`; the JSON encoder writes
 * its text with it too). A batch's bytes are handed over as a view, not a
 * copy, and the writer goes on in another buffer (`handOver`).
 *
 * A length-delimited field is written in one pass: `begin` reserves one byte
 * for its length and `end` writes the length, moving the content right when
 * the length needs more than one byte (a short memmove), so every length is
 * minimal, as protobuf encoders write it.
 */
export class ProtobufWriter {
  position = 0;

  constructor(private buffer: Buffer) {}

  tag(field: number, wireType: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wireType);
  }

  /** A non-negative integer up to 2^53, or a negative one (as int64: ten bytes). */
  varint(value: number): void {
    this.reserve(10);
    if (value >= 0 && value <= 0xffffffff) {
      let remaining = value >>> 0;
      while (remaining > 0x7f) {
        this.buffer[this.position++] = (remaining & 0x7f) | 0x80;
        remaining >>>= 7;
      }
      this.buffer[this.position++] = remaining;
      return;
    }
    let low = value >>> 0;
    let high = Math.floor(value / 0x100000000) >>> 0;
    while (high > 0 || low > 0x7f) {
      this.buffer[this.position++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buffer[this.position++] = low;
  }

  /** An unsigned 32-bit word, most significant byte first (a part of a trace or span id). */
  word(value: number): void {
    this.reserve(4);
    const buffer = this.buffer;
    const at = this.position;
    buffer[at] = value >>> 24;
    buffer[at + 1] = value >>> 16;
    buffer[at + 2] = value >>> 8;
    buffer[at + 3] = value;
    this.position = at + 4;
  }

  fixed32(value: number): void {
    this.reserve(4);
    this.position = this.buffer.writeUInt32LE(value >>> 0, this.position);
  }

  fixed64(low: number, high: number): void {
    this.reserve(8);
    this.buffer.writeUInt32LE(low >>> 0, this.position);
    this.position = this.buffer.writeUInt32LE(high >>> 0, this.position + 4);
  }

  /** A time as fixed64 nanoseconds since the epoch, from whole seconds and nanoseconds, exactly (no float rounding, no BigInt). */
  fixed64Nanoseconds(seconds: number, nanoseconds: number): void {
    // seconds × 10^9 = seconds × 15258 × 2^16 + seconds × 51712 (10^9 = 0x3B9A_CA00); every product stays below 2^53.
    const upper = seconds * 15258;
    const lower = seconds * 51712 + nanoseconds + (upper % 0x10000) * 0x10000;
    this.fixed64(lower >>> 0, Math.floor(upper / 0x10000) + Math.floor(lower / 0x100000000));
  }

  double(value: number): void {
    this.reserve(8);
    this.position = this.buffer.writeDoubleLE(value, this.position);
  }

  /** A length-prefixed UTF-8 string (a short ASCII one in a single pass). */
  string(value: string): void {
    const length = value.length;
    if (length < 0x80) {
      this.reserve(length + 1);
      const buffer = this.buffer;
      let at = this.position + 1;
      let index = 0;
      for (; index < length; index += 1) {
        const code = value.charCodeAt(index);
        if (code > 0x7f) break;
        buffer[at++] = code;
      }
      if (index === length) {
        buffer[this.position] = length;
        this.position = at;
        return;
      }
    }
    const bytes = Buffer.byteLength(value);
    this.varint(bytes);
    this.reserve(bytes);
    this.position += this.buffer.write(value, this.position, 'utf8');
  }

  /** Bytes copied as they are (a field encoded once and cached). */
  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.position);
    this.position += bytes.length;
  }

  /** UTF-8 text as it is, without a length (the JSON encoding's bytes). */
  text(value: string): void {
    this.reserve(value.length * 3);
    this.position += this.buffer.write(value, this.position, 'utf8');
  }

  /** Starts a length-delimited field's content (after its tag); returns where, for `end`. */
  begin(): number {
    this.reserve(1);
    this.position += 1;
    return this.position;
  }

  /** Ends the field `begin` started: writes its length in front of its content. */
  end(start: number): void {
    const length = this.position - start;
    if (length < 0x80) {
      this.buffer[start - 1] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.reserve(extra);
    this.buffer.copyWithin(start + extra, start, this.position);
    this.position += extra;
    let remaining = length;
    let at = start - 1;
    while (remaining > 0x7f) {
      this.buffer[at++] = (remaining & 0x7f) | 0x80;
      remaining >>>= 7;
    }
    this.buffer[at] = remaining;
  }

  /** A copy of the bytes from `start` to the end. */
  copyFrom(start: number): Buffer {
    return Buffer.from(this.buffer.subarray(start, this.position));
  }

  /** A copy of the bytes from `start` to the end, which are then forgotten. */
  takeFrom(start: number): Buffer {
    const bytes = Buffer.from(this.buffer.subarray(start, this.position));
    this.position = start;
    return bytes;
  }

  /** The bytes from `start` to the end, as a view of this buffer (not a copy), and the writer goes on at the start of `next`. */
  handOver(start: number, next: Buffer): Buffer {
    const bytes = this.buffer.subarray(start, this.position);
    this.buffer = next;
    this.position = 0;
    return bytes;
  }

  private reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.position + bytes));
    this.buffer.copy(grown, 0, 0, this.position);
    this.buffer = grown;
  }
}

export function varintSize(value: number): number {
  let size = 1;
  for (let remaining = value; remaining >= 0x80; remaining = Math.floor(remaining / 0x80)) size += 1;
  return size;
}
