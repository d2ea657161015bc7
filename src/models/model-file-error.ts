/**
 * Why fetching or copying a model file failed. The message is written for the
 * person at the terminal (what happened and what to do); `code` is stable for
 * code that reacts to it, and `resumable` says whether a `.part` file was kept
 * so that running the same command again continues where this one stopped.
 */
export type ModelFileErrorCode =
  /** DNS failure, refused or reset connection before any reply: the host cannot be reached. */
  | 'unreachable'
  /** The server answered with an error status (404, 401, 5xx...). */
  | 'http_status'
  /** The connection dropped, or stalled, in the middle of the file. */
  | 'interrupted'
  /** The caller's signal aborted the transfer (Ctrl-C). */
  | 'aborted'
  /** The bytes are not the expected ones: wrong size or sha256. */
  | 'integrity'
  /** The file does not start with the GGUF magic. */
  | 'not_gguf'
  /** A local source file could not be read, or the destination written. */
  | 'file_system';

export class ModelFileError extends Error {
  readonly code: ModelFileErrorCode;
  /** True when a `.part` file was kept and the same command resumes from it. */
  readonly resumable: boolean;
  /** The HTTP status, for `http_status`. */
  readonly status: number | null;
  /** The `.part` file kept for a resume, and how many bytes it holds. */
  readonly partPath: string | null;
  readonly bytesKept: number;

  constructor(
    message: string,
    options: { code: ModelFileErrorCode; status?: number; partPath?: string; bytesKept?: number; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelFileError';
    this.code = options.code;
    this.status = options.status ?? null;
    this.partPath = options.partPath ?? null;
    this.bytesKept = options.bytesKept ?? 0;
    this.resumable = this.partPath !== null && this.bytesKept > 0;
  }
}
