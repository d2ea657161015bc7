/**
 * A pass-through stream for model transfers: every chunk goes into the
 * sha256 and the progress count on its way to the `.part` file, so the file is
 * hashed while it is written instead of read again afterwards.
 */
import type { Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import { createProgressMeter, type DownloadProgress } from './download-progress.js';

export function hashingCounter(options: {
  hash: Hash;
  totalBytes: number | null;
  /** Bytes already in hand (and hashed) from an earlier run. */
  startBytes: number;
  onProgress?: (progress: DownloadProgress) => void;
}): Transform {
  const { hash, onProgress } = options;
  const meter = createProgressMeter(options.totalBytes, options.startBytes);
  let done = options.startBytes;
  onProgress?.(meter.at(done));
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      done += chunk.length;
      onProgress?.(meter.at(done));
      callback(null, chunk);
    },
  });
}
