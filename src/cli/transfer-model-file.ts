/** One model file fetched or copied into place with progress on a stream: `taskgate models pull` and the first start's pull. */
import { basename } from 'node:path';
import type { DownloadProgress } from '../models/download-progress.js';
import { copyModelFile } from '../models/model-copy.js';
import { downloadModelFile } from '../models/model-download.js';
import type { PlacedModelFile } from '../models/place-verified-part.js';
import { createProgressReporter, type ProgressStream } from '../models/progress-reporter.js';
import type { PullTarget } from '../models/pull-target.js';

export async function transferModelFile(
  target: PullTarget,
  options: { stream: ProgressStream; signal: AbortSignal; onProgress?: (progress: DownloadProgress) => void },
): Promise<PlacedModelFile> {
  const name = basename(target.destination);
  const reporter = createProgressReporter({ stream: options.stream, label: name });
  options.stream.write(target.kind === 'download' ? `Downloading ${name} from ${target.url}\n` : `Copying ${target.source}\n`);
  const watch = {
    signal: options.signal,
    onProgress: (progress: DownloadProgress) => {
      reporter.update(progress);
      options.onProgress?.(progress);
    },
  };
  try {
    return target.kind === 'download'
      ? await downloadModelFile({ ...target, ...watch, requireGguf: true })
      : await copyModelFile({ ...target, ...watch });
  } finally {
    reporter.finish();
  }
}
