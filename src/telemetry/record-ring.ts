/**
 * A ring of variable-length records in shared memory, from one writer thread
 * to one reader thread: how a call's span facts leave the request thread
 * (`span-record.ts` says what a record holds, `span-export-worker.ts` reads
 * them).
 *
 * Why shared memory and not `postMessage`: a message per call costs the
 * request thread a structured clone and a wake-up of the other thread, some
 * 9 µs (docs/telemetry.md); writing a record here is a few dozen byte stores
 * and one atomic store, and the reader takes hundreds at a time.
 *
 * The writer reserves room for a record's largest size (`begin`), writes its
 * fields, and publishes it (`commit`): the record's length, then the write
 * index, stored atomically after its bytes, so the reader never sees half a
 * record. A record never wraps: when the end of the ring has no room for it,
 * the writer marks the rest as skipped and starts again at the front. A full
 * ring refuses the record (`begin` returns false), and the writer drops it:
 * nothing waits. Strings are UTF-8 with a 32-bit length.
 */
/**
 * Header slots (32-bit): where the writer writes next, where the reader reads
 * next, whether the reader sleeps, and its wake-up counter. Each side's index
 * has a cache line (64 bytes) of its own, so a write to one does not take
 * the other's line from the other core.
 */
const WRITE = 0;
const READ = 16;
const SLEEPING = 32;
const WAKE = 33;
const HEADER_SLOTS = 48;
/** A length that says: the rest of the ring is skipped, the next record is at the front. */
const SKIP_TO_FRONT = 0xffffffff;
const LENGTH_BYTES = 4;

/** `Atomics.waitAsync` (ES2024, in Node since 16), which the ES2023 library this project compiles against does not declare. */
interface AtomicsWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeoutMs: number,
  ): { async: false; value: string } | { async: true; value: Promise<string> };
}

export interface RecordRing {
  readonly memory: SharedArrayBuffer;
}

export function createRecordRing(capacityBytes: number): RecordRing {
  return { memory: new SharedArrayBuffer(HEADER_SLOTS * 4 + capacityBytes) };
}

class RingView {
  protected readonly header: Int32Array;
  protected readonly bytes: Buffer;
  protected readonly view: DataView;
  protected readonly capacity: number;
  position = 0;

  constructor(ring: RecordRing) {
    this.header = new Int32Array(ring.memory, 0, HEADER_SLOTS);
    this.capacity = ring.memory.byteLength - HEADER_SLOTS * 4;
    this.bytes = Buffer.from(ring.memory, HEADER_SLOTS * 4, this.capacity);
    this.view = new DataView(ring.memory, HEADER_SLOTS * 4, this.capacity);
  }
}

export class RecordRingWriter extends RingView {
  private recordStart = 0;
  /** Where the writer writes next (its own index: only it changes it). */
  private write = 0;
  /** Where the reader was when last looked at: it only moves forward, so room seen then is still there. */
  private read = 0;

  /** The largest record size `begin` is asked for, past the fixed part: `3 × length + 4` for a string of `length` UTF-16 units. */
  static stringBytes(value: string): number {
    return 3 * value.length + 4;
  }

  /** Makes room for a record of at most `maxBytes`; false when the ring is too full (the caller drops the record). */
  begin(maxBytes: number): boolean {
    const start = this.room(maxBytes + LENGTH_BYTES) ?? this.room(maxBytes + LENGTH_BYTES, Atomics.load(this.header, READ));
    if (start === null) return false;
    if (start !== this.write && this.capacity - this.write >= LENGTH_BYTES) this.view.setUint32(this.write, SKIP_TO_FRONT, true);
    this.recordStart = start;
    this.position = start + LENGTH_BYTES;
    return true;
  }

  /** Where a record of `needed` bytes starts (at the write index, or at the front), or null when the ring has no room for it. */
  private room(needed: number, read = this.read): number | null {
    this.read = read;
    const write = this.write;
    if (write >= read) {
      // Room at the end (one byte is always left free when the reader is at the front: a full ring would look empty).
      if (this.capacity - write - (read === 0 ? 1 : 0) >= needed) return write;
      return read - 1 >= needed ? 0 : null;
    }
    return read - write - 1 >= needed ? write : null;
  }

  u8(value: number): void {
    this.bytes[this.position++] = value;
  }

  u32(value: number): void {
    this.view.setUint32(this.position, value, true);
    this.position += 4;
  }

  f64(value: number): void {
    this.view.setFloat64(this.position, value, true);
    this.position += 8;
  }

  /** A string: its UTF-8 byte length, then its bytes (a short ASCII one copied in one pass). */
  string(value: string): void {
    const bytes = this.bytes;
    const at = this.position + 4;
    const length = value.length;
    let index = 0;
    for (; index < length; index += 1) {
      const code = value.charCodeAt(index);
      if (code > 0x7f) break;
      bytes[at + index] = code;
    }
    const written = index === length ? length : bytes.write(value, at, 'utf8');
    this.view.setUint32(this.position, written, true);
    this.position = at + written;
  }

  /** Publishes the record, and wakes the reader when it sleeps. */
  commit(): void {
    this.view.setUint32(this.recordStart, this.position - this.recordStart - LENGTH_BYTES, true);
    this.write = this.position === this.capacity ? 0 : this.position;
    Atomics.store(this.header, WRITE, this.write);
    if (Atomics.load(this.header, SLEEPING) === 1) {
      Atomics.store(this.header, SLEEPING, 0);
      Atomics.add(this.header, WAKE, 1);
      Atomics.notify(this.header, WAKE);
    }
  }
}

export class RecordRingReader extends RingView {
  /** Reads every record published so far, each with `read` (which reads its fields in order); returns how many. */
  drain(read: (reader: RecordRingReader) => void): number {
    const write = Atomics.load(this.header, WRITE);
    let at = Atomics.load(this.header, READ);
    let count = 0;
    try {
      while (at !== write) {
        if (this.capacity - at < LENGTH_BYTES || this.view.getUint32(at, true) === SKIP_TO_FRONT) {
          at = 0;
          continue;
        }
        const end = at + LENGTH_BYTES + this.view.getUint32(at, true);
        this.position = at + LENGTH_BYTES;
        // A record that fails to read is skipped, not read again.
        at = end === this.capacity ? 0 : end;
        count += 1;
        read(this);
      }
    } finally {
      // The room read is given back once per drain (one write to the reader's line, not one a record).
      Atomics.store(this.header, READ, at);
    }
    return count;
  }

  /** Waits until a record is published or `timeoutMs` passes (the writer wakes it on its next commit). */
  async sleep(timeoutMs: number): Promise<void> {
    const wake = Atomics.load(this.header, WAKE);
    Atomics.store(this.header, SLEEPING, 1);
    // A record published between the last drain and now must not wait for the timeout.
    if (Atomics.load(this.header, WRITE) !== Atomics.load(this.header, READ)) {
      Atomics.store(this.header, SLEEPING, 0);
      return;
    }
    const waiting = (Atomics as unknown as AtomicsWaitAsync).waitAsync(this.header, WAKE, wake, timeoutMs);
    if (waiting.async) await waiting.value;
    Atomics.store(this.header, SLEEPING, 0);
  }

  u8(): number {
    return this.bytes[this.position++] as number;
  }

  u32(): number {
    const value = this.view.getUint32(this.position, true);
    this.position += 4;
    return value;
  }

  f64(): number {
    const value = this.view.getFloat64(this.position, true);
    this.position += 8;
    return value;
  }

  string(): string {
    const length = this.u32();
    const value = this.bytes.toString('utf8', this.position, this.position + length);
    this.position += length;
    return value;
  }
}
