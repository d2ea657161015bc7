/**
 * A small GGUF v3 writer for tests: enough of the format to write a tiny model
 * that llama.cpp (through node-llama-cpp) loads, and nothing more.
 *
 *   writeGguf(path, {
 *     metadata: { 'general.architecture': ggufString('llama'), 'llama.block_count': ggufUint32(2), ... },
 *     tensors: [{ name: 'token_embd.weight', dimensions: [64, 259], data: new Float32Array(64 * 259) }],
 *   });
 *
 * Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), all
 * little-endian:
 *   header       "GGUF", version u32 = 3, tensor count u64, metadata count u64
 *   metadata     key (string), value type u32, value
 *   tensor infos name (string), dimension count u32, dimensions u64 each
 *                (ggml order: the innermost, fastest-varying one first),
 *                tensor type u32, offset u64 from the start of the data section
 *   padding      up to `general.alignment` (written by us: 32)
 *   data         each tensor's bytes, each starting on a 32-byte boundary
 * A string is a u64 byte length and UTF-8 bytes, without a terminator.
 */
import { writeFileSync } from 'node:fs';

/**
 * One metadata value. GGUF stores the exact numeric type, which a JavaScript
 * number cannot say, so every value carries its type; build them with the
 * `gguf…` functions below.
 */
export type GgufValue =
  | { readonly type: 'uint32' | 'int32' | 'float32'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'string[]'; readonly value: readonly string[] }
  | { readonly type: 'int32[]' | 'float32[]'; readonly value: readonly number[] };

export const ggufUint32 = (value: number): GgufValue => ({ type: 'uint32', value });
export const ggufInt32 = (value: number): GgufValue => ({ type: 'int32', value });
export const ggufFloat32 = (value: number): GgufValue => ({ type: 'float32', value });
export const ggufBool = (value: boolean): GgufValue => ({ type: 'bool', value });
export const ggufString = (value: string): GgufValue => ({ type: 'string', value });
export const ggufStringArray = (value: readonly string[]): GgufValue => ({ type: 'string[]', value });
export const ggufInt32Array = (value: readonly number[]): GgufValue => ({ type: 'int32[]', value });
export const ggufFloat32Array = (value: readonly number[]): GgufValue => ({ type: 'float32[]', value });

/** An F32 tensor, stored row after row with `dimensions[0]` values per row. */
export interface GgufTensor {
  /** As llama.cpp looks it up, e.g. `blk.0.attn_q.weight`. */
  readonly name: string;
  /** ggml order, innermost first: a llama `attn_q` is `[input size, output size]`. */
  readonly dimensions: readonly number[];
  /** Exactly the product of `dimensions` values. */
  readonly data: Float32Array;
}

export interface GgufContents {
  /** Keys in the order they are written; `general.alignment` is added by the writer. */
  readonly metadata: Readonly<Record<string, GgufValue>>;
  readonly tensors: readonly GgufTensor[];
}

const ALIGNMENT = 32;

/** Value type codes from the GGUF spec. */
const TYPE_CODE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;
const F32_TENSOR_TYPE = 0;

/** Writes `contents` to `path` as a GGUF v3 file; returns the file size in bytes. */
export function writeGguf(path: string, contents: GgufContents): number {
  const bytes = encodeGguf(contents);
  writeFileSync(path, bytes);
  return bytes.length;
}

/** The bytes of the GGUF file for `contents`. */
function encodeGguf(contents: GgufContents): Uint8Array {
  const metadata: Record<string, GgufValue> = { ...contents.metadata, 'general.alignment': ggufUint32(ALIGNMENT) };
  const out = new ByteSink();

  out.raw(new TextEncoder().encode('GGUF'));
  out.uint32(3);
  out.uint64(contents.tensors.length);
  out.uint64(Object.keys(metadata).length);

  for (const [key, value] of Object.entries(metadata)) {
    out.string(key);
    writeValue(out, value);
  }

  let dataOffset = 0;
  for (const tensor of contents.tensors) {
    const valueCount = tensor.dimensions.reduce((product, dimension) => product * dimension, 1);
    if (valueCount !== tensor.data.length) {
      throw new Error(
        `tensor ${tensor.name}: dimensions [${tensor.dimensions.join(', ')}] need ${valueCount} values, got ${tensor.data.length}`,
      );
    }
    out.string(tensor.name);
    out.uint32(tensor.dimensions.length);
    for (const dimension of tensor.dimensions) out.uint64(dimension);
    out.uint32(F32_TENSOR_TYPE);
    out.uint64(dataOffset);
    dataOffset = alignUp(dataOffset + tensor.data.byteLength);
  }

  out.padTo(ALIGNMENT);
  for (const tensor of contents.tensors) {
    // Copy rather than view: `data` may be a view into a larger buffer, and the
    // file is little-endian whatever the host is.
    const tensorBytes = new DataView(new ArrayBuffer(tensor.data.byteLength));
    tensor.data.forEach((value, index) => tensorBytes.setFloat32(index * 4, value, true));
    out.raw(new Uint8Array(tensorBytes.buffer));
    out.padTo(ALIGNMENT);
  }
  return out.bytes();
}

function writeValue(out: ByteSink, value: GgufValue): void {
  switch (value.type) {
    case 'uint32':
      out.uint32(TYPE_CODE.uint32);
      out.uint32(value.value);
      return;
    case 'int32':
      out.uint32(TYPE_CODE.int32);
      out.int32(value.value);
      return;
    case 'float32':
      out.uint32(TYPE_CODE.float32);
      out.float32(value.value);
      return;
    case 'bool':
      out.uint32(TYPE_CODE.bool);
      out.uint8(value.value ? 1 : 0);
      return;
    case 'string':
      out.uint32(TYPE_CODE.string);
      out.string(value.value);
      return;
    case 'string[]':
      writeArrayHeader(out, TYPE_CODE.string, value.value.length);
      for (const item of value.value) out.string(item);
      return;
    case 'int32[]':
      writeArrayHeader(out, TYPE_CODE.int32, value.value.length);
      for (const item of value.value) out.int32(item);
      return;
    case 'float32[]':
      writeArrayHeader(out, TYPE_CODE.float32, value.value.length);
      for (const item of value.value) out.float32(item);
      return;
  }
}

function writeArrayHeader(out: ByteSink, itemTypeCode: number, length: number): void {
  out.uint32(TYPE_CODE.array);
  out.uint32(itemTypeCode);
  out.uint64(length);
}

function alignUp(offset: number): number {
  return Math.ceil(offset / ALIGNMENT) * ALIGNMENT;
}

/** Little-endian bytes appended to a growing list of chunks. */
class ByteSink {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  raw(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  uint8(value: number): void {
    this.raw(Uint8Array.of(value));
  }

  uint32(value: number): void {
    this.fixed(4, (view) => view.setUint32(0, value, true));
  }

  int32(value: number): void {
    this.fixed(4, (view) => view.setInt32(0, value, true));
  }

  float32(value: number): void {
    this.fixed(4, (view) => view.setFloat32(0, value, true));
  }

  uint64(value: number): void {
    this.fixed(8, (view) => view.setBigUint64(0, BigInt(value), true));
  }

  string(value: string): void {
    const utf8 = new TextEncoder().encode(value);
    this.uint64(utf8.length);
    this.raw(utf8);
  }

  padTo(alignment: number): void {
    const padding = (alignment - (this.length % alignment)) % alignment;
    if (padding > 0) this.raw(new Uint8Array(padding));
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.chunks, this.length);
  }

  private fixed(size: number, write: (view: DataView) => void): void {
    const buffer = new ArrayBuffer(size);
    write(new DataView(buffer));
    this.raw(new Uint8Array(buffer));
  }
}
