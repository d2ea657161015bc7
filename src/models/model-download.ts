/**
 * Downloads one model file over HTTP(S), resumably and verified.
 *
 * Bytes go to `<destination>.part`. When a part is already there (an earlier
 * run was interrupted), its bytes are hashed and the rest is asked for with
 * `Range: bytes=N-`: a 206 reply is appended, a 200 (the server ignored the
 * range) starts over, a 416 means the part is already whole. Redirects are
 * followed (Hugging Face answers with one to its CDN). Size and sha256 are
 * checked before the part is renamed into place; a mismatch deletes the part.
 * A dropped connection or an abort keeps the part, so the same call resumes.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { DownloadProgress } from './download-progress.js';
import { hashingCounter } from './hashing-counter.js';
import { ModelFileError } from './model-file-error.js';
import { fileSize, hashFileInto, partFilePath } from './model-files.js';
import { describeNetworkFailure, httpStatusMessage } from './network-failure.js';
import { placeVerifiedPart, type PlacedModelFile } from './place-verified-part.js';

export interface DownloadModelFileOptions {
  url: string;
  /** Final path of the file; its directory is created when missing. */
  destination: string;
  /** Hex sha256 the file must have; unchecked when absent. */
  expectedSha256?: string;
  /** Exact size the file must have; unknown when absent. */
  expectedSize?: number;
  /** Refuse a file that does not start with the GGUF magic (an HTML error page served with 200, say). */
  requireGguf?: boolean;
  /** Aborting keeps the part for a later resume. */
  signal?: AbortSignal;
  /** Called as bytes arrive (often: throttle the drawing, not the calls). */
  onProgress?: (progress: DownloadProgress) => void;
}

export interface DownloadedModelFile extends PlacedModelFile {
  /** Bytes that came from a part left by an earlier run (0 for a fresh download). */
  resumedFromBytes: number;
}

export async function downloadModelFile(options: DownloadModelFileOptions): Promise<DownloadedModelFile> {
  const { url, destination, expectedSize, signal } = options;
  const partPath = partFilePath(destination);
  await mkdir(dirname(destination), { recursive: true });

  let kept = fileSize(partPath) ?? 0;
  if (expectedSize !== undefined && kept > expectedSize) kept = await discard(partPath);
  let hash = createHash('sha256');
  if (kept > 0) await hashFileInto(partPath, hash);
  const place = async () => ({
    ...(await placeVerifiedPart({ ...options, partPath, sha256: hash.digest('hex') })),
    resumedFromBytes: kept,
  });
  // A whole part from a run that stopped before verifying: no need for the network.
  if (kept > 0 && kept === expectedSize) return place();

  let response = await send(url, kept, signal, partPath);
  if (response.status === 416 && kept > 0) {
    await response.body?.cancel();
    // "Nothing past byte N": the part is whole, unless the server names another size.
    const total = unsatisfiedRangeTotal(response);
    if (total === null || total === kept) return place();
    kept = await discard(partPath);
    hash = createHash('sha256');
    response = await send(url, 0, signal, partPath);
  }
  if (response.status === 206 && kept > 0 && contentRange(response)?.start !== kept) {
    // A range we did not ask for: start over rather than splice bytes from the wrong place.
    await response.body?.cancel();
    response = await send(url, 0, signal, partPath);
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new ModelFileError(httpStatusMessage(url, response.status, response.statusText), {
      code: 'http_status',
      status: response.status,
    });
  }
  if (response.status === 200 && kept > 0) {
    kept = await discard(partPath);
    hash = createHash('sha256');
  }

  const total = response.status === 206 ? (contentRange(response)?.total ?? null) : contentLength(response);
  if (expectedSize !== undefined && total !== null && total !== expectedSize) {
    await response.body?.cancel();
    await discard(partPath);
    throw new ModelFileError(
      `size mismatch for ${url}: expected ${expectedSize} bytes${options.expectedSha256 === undefined ? '' : ` (sha256 ${options.expectedSha256})`}, ` +
        `but the server offers ${total} bytes; nothing was kept. Check the URL or the mirror.`,
      { code: 'integrity' },
    );
  }

  await receive(response, { partPath, append: kept > 0, total: total ?? expectedSize ?? null, kept, hash, options });
  return place();
}

interface ReceiveState {
  partPath: string;
  append: boolean;
  total: number | null;
  kept: number;
  hash: ReturnType<typeof createHash>;
  options: DownloadModelFileOptions;
}

/** Streams the body into the part, hashing as it goes; a failure keeps what reached the disk. */
async function receive(response: Response, state: ReceiveState): Promise<void> {
  const { partPath, total, hash, options } = state;
  let done = state.kept;
  const counter = hashingCounter({
    hash,
    totalBytes: total,
    startBytes: state.kept,
    onProgress: (progress) => {
      done = progress.bytesDone;
      options.onProgress?.(progress);
    },
  });
  try {
    if (response.body === null) throw new Error('the reply has no body');
    const body = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
    await pipeline(body, counter, createWriteStream(partPath, { flags: state.append ? 'a' : 'w' }), { signal: options.signal });
  } catch (error) {
    const bytesKept = fileSize(partPath) ?? 0;
    const resume = `${bytesKept} bytes are kept in ${partPath}; run the same command again to resume`;
    if (options.signal?.aborted === true)
      throw new ModelFileError(`download stopped; ${resume}`, { code: 'aborted', partPath, bytesKept, cause: error });
    const host = new URL(options.url).host;
    const of = total === null ? '' : ` of ${total}`;
    throw new ModelFileError(`the connection to ${host} dropped after ${done}${of} bytes (${describeNetworkFailure(error)}); ${resume}`, {
      code: 'interrupted',
      partPath,
      bytesKept,
      cause: error,
    });
  }
  const written = fileSize(partPath) ?? 0;
  if (total !== null && written < total) {
    throw new ModelFileError(
      `the download ended early at ${written} of ${total} bytes; run the same command again to resume from ${partPath}`,
      {
        code: 'interrupted',
        partPath,
        bytesKept: written,
      },
    );
  }
}

async function send(url: string, offset: number, signal: AbortSignal | undefined, partPath: string): Promise<Response> {
  // identity: byte offsets of a range must be offsets in the file, not in a compressed stream.
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (offset > 0) headers.range = `bytes=${offset}-`;
  try {
    return await fetch(url, { headers, redirect: 'follow', signal });
  } catch (error) {
    if (signal?.aborted === true) {
      const kept = offset > 0 ? `; ${offset} bytes are kept in ${partPath}, run the same command again to resume` : '';
      throw new ModelFileError(`download stopped before any new bytes arrived${kept}`, {
        code: 'aborted',
        partPath,
        bytesKept: offset,
        cause: error,
      });
    }
    const host = new URL(url).host;
    throw new ModelFileError(
      `cannot reach ${host}: ${describeNetworkFailure(error)}; check the network, set a mirror (--mirror URL or TASKGATE_MODEL_MIRROR), or pass a local file path`,
      { code: 'unreachable', cause: error },
    );
  }
}

function contentLength(response: Response): number | null {
  const text = response.headers.get('content-length');
  return text !== null && /^\d+$/.test(text) ? Number(text) : null;
}

/** `Content-Range: bytes 100-199/1000`; the total may be `*` (unknown). */
function contentRange(response: Response): { start: number; total: number | null } | undefined {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  if (match === null) return undefined;
  return { start: Number(match[1]), total: match[2] === '*' ? null : Number(match[2]) };
}

/** `Content-Range: bytes *\/1000` on a 416. */
function unsatisfiedRangeTotal(response: Response): number | null {
  const match = /^bytes \*\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
  return match === null ? null : Number(match[1]);
}

async function discard(partPath: string): Promise<0> {
  await rm(partPath, { force: true });
  return 0;
}
