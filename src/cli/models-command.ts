import { readdirSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadSettings } from '../config/load-config.js';
import { configuredModelFiles, type ConfiguredModelFile } from '../models/configured-model-files.js';
import { formatBytes } from '../models/download-progress.js';
import { ModelFileError } from '../models/model-file-error.js';
import { fileSize, modelFileStatus, modelsDirectoryOf, sha256OfFile, type ModelFileStatus } from '../models/model-files.js';
import { MirrorError, parseMirror } from '../models/mirror-url.js';
import { PullTargetError, resolvePullTarget, type PullTarget } from '../models/pull-target.js';
import { CliError, UsageError } from './cli-error.js';
import { openDataDirectory } from './data-directory.js';
import { formatTable } from './format-table.js';
import { asksForHelp, parseCommand } from './parse-command.js';
import { transferModelFile } from './transfer-model-file.js';

export const modelsUsage = `Usage: taskgate models <command> [options]

Fetches and lists the GGUF model files that the built-in CPU engine serves
from <data dir>/models.

Commands:
  pull <catalog id | URL | file.gguf>   fetch a model file; an interrupted pull resumes
  list                                  the default catalog and which files are present

Run "taskgate models <command> --help" for a command's options.`;

export const pullUsage = `Usage: taskgate models pull <catalog id | https URL | path to a .gguf file> [options]

Puts a model file in <data dir>/models:
  a catalog id or alias ("taskgate models list"): its pinned Hugging Face URL,
      verified against the catalog's size and sha256;
  an http(s) URL: the file named by the URL's last path segment;
  a local .gguf file: copied in (for sites without internet access).
A file already in place that matches is left alone. An interrupted download
leaves <file>.part; running the same command again resumes it.
Progress goes to stderr; the file's path is printed on stdout.

Options:
  --data-dir DIR   data directory (env TASKGATE_DATA_DIR; default ./.taskgate)
  --mirror URL     fetch catalog files from this mirror instead of huggingface.co,
                   keeping their paths (env TASKGATE_MODEL_MIRROR)

The catalog is the built-in one, or the JSON file TASKGATE_MODEL_CATALOG names.
  --sha256 HEX     checksum the file must have (URLs and local files)
  -h, --help       show this help`;

export const listUsage = `Usage: taskgate models list [--data-dir DIR] [--config FILE] [--json]

Shows the models the CPU engine serves (with no config: the default catalog):
id, family, file size, context window, price (USD per million input / output
tokens on our own CPU), and whether the file is on disk.

Options:
  --data-dir DIR   data directory (env TASKGATE_DATA_DIR; default ./.taskgate)
  --config FILE    list the llama-cpp models of this config (env TASKGATE_CONFIG)
  --json           one JSON document, for scripts
  -h, --help       show this help`;

export async function modelsCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const [subcommand, ...rest] = argv;
  if (asksForHelp(subcommand)) {
    process.stdout.write(`${modelsUsage}\n`);
    return;
  }
  if (subcommand === 'pull') return pull(rest, environment);
  if (subcommand === 'list') return list(rest, environment);
  throw new UsageError(`Unknown models command "${subcommand}"`, modelsUsage);
}

async function pull(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const options = { 'data-dir': { type: 'string' }, mirror: { type: 'string' }, sha256: { type: 'string' } } as const;
  const { values, positionals, help } = parseCommand(argv, options, pullUsage, true);
  if (help) return void process.stdout.write(`${pullUsage}\n`);
  if (positionals.length !== 1) throw new UsageError('pull takes exactly one model: a catalog id, a URL or a .gguf file', pullUsage);
  const argument = positionals[0] as string;
  if (values.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(values.sha256))
    throw new UsageError('--sha256 must be 64 hex digits', pullUsage);
  const mirror = checkedMirror(values.mirror, environment.TASKGATE_MODEL_MIRROR);
  const settings = loadSettings({ dataDirectory: values['data-dir'] }, environment);
  openDataDirectory(settings);
  const modelsDirectory = modelsDirectoryOf(settings.dataDirectory);

  let target: PullTarget;
  try {
    target = resolvePullTarget(argument, {
      modelsDirectory,
      mirror,
      sha256: values.sha256,
      isFile: (path) => fileSize(path) !== null,
      models: settings.catalog,
    });
  } catch (error) {
    if (error instanceof PullTargetError) throw new CliError(error.message);
    throw error;
  }
  if (await alreadyInPlace(target)) {
    process.stdout.write(`${target.destination}\n`);
    return;
  }

  const name = basename(target.destination);
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const placed = await transferModelFile(target, { stream: process.stderr, signal: controller.signal });
    const checked = target.expectedSha256 === undefined ? 'not checked: no checksum known; pass --sha256 to check' : 'verified';
    process.stderr.write(`${name}: ${formatBytes(placed.sizeBytes)}, sha256 ${placed.sha256} (${checked})\n`);
    process.stdout.write(`${placed.path}\n`);
  } catch (error) {
    throw explain(error, argv);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/** The mirror from the flag (a usage error when bad) or the environment (a setting error when bad). */
function checkedMirror(flag: string | undefined, fromEnvironment: string | undefined): string | undefined {
  const mirror = flag ?? (fromEnvironment === '' ? undefined : fromEnvironment);
  if (mirror === undefined) return undefined;
  try {
    parseMirror(mirror);
  } catch (error) {
    if (!(error instanceof MirrorError)) throw error;
    if (flag !== undefined) throw new UsageError(`--mirror: ${error.message}`, pullUsage);
    throw new CliError(`TASKGATE_MODEL_MIRROR: ${error.message}`);
  }
  return mirror;
}

/** True (and says so) when the destination already holds the right bytes. */
async function alreadyInPlace(target: PullTarget): Promise<boolean> {
  const size = fileSize(target.destination);
  if (size === null) return false;
  if (target.kind === 'copy' && realpathSync(target.source) === realpathSync(target.destination)) {
    process.stderr.write(`${target.destination} is already in the models directory\n`);
    return true;
  }
  const wantedSize = target.expectedSize ?? (target.kind === 'copy' ? fileSize(target.source) : null);
  if (wantedSize !== null && size !== wantedSize) {
    process.stderr.write(`${target.destination} exists but has ${size} bytes, not ${wantedSize}; fetching it again\n`);
    return false;
  }
  const wantedSha256 = target.expectedSha256 ?? (target.kind === 'copy' ? await sha256OfFile(target.source) : undefined);
  if (wantedSha256 === undefined) {
    process.stderr.write(`${target.destination} is already present (no checksum to compare it with; delete it to fetch it again)\n`);
    return true;
  }
  const sha256 = await sha256OfFile(target.destination);
  if (sha256 !== wantedSha256) {
    process.stderr.write(`${target.destination} exists but its sha256 is ${sha256}, not ${wantedSha256}; fetching it again\n`);
    return false;
  }
  process.stderr.write(`${target.destination} is already present and matches (sha256 ${sha256})\n`);
  return true;
}

/** A failed pull as the user should read it; Ctrl-C exits 130, as shells expect. */
function explain(error: unknown, argv: string[]): unknown {
  if (!(error instanceof ModelFileError)) return error;
  const again = `taskgate models pull ${argv.map((part) => (/^[\w./:@=+-]+$/.test(part) ? part : JSON.stringify(part))).join(' ')}`;
  if (error.code === 'aborted') {
    const kept = error.resumable ? `${error.bytesKept} bytes are kept in ${error.partPath}; resume with: ${again}` : 'nothing was kept';
    return new CliError(`interrupted; ${kept}`, 130);
  }
  return new CliError(error.message);
}

async function list(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    { 'data-dir': { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } },
    listUsage,
  );
  if (help) return void process.stdout.write(`${listUsage}\n`);
  const settings = loadSettings({ dataDirectory: values['data-dir'], configPath: values.config }, environment);
  openDataDirectory(settings);
  const modelsDirectory = modelsDirectoryOf(settings.dataDirectory);
  const rows = configuredModelFiles(settings).map((file) => ({ file, status: fileStatus(modelsDirectory, file) }));
  const listedFiles = new Set(rows.map((row) => row.status.path));
  const otherFiles = ggufFilesIn(modelsDirectory).filter((file) => !listedFiles.has(file.path));

  if (values.json === true) {
    const models = rows.map(({ file, status }) => ({
      ...(file.catalog ?? { id: file.model.id, file: status.path }),
      price: file.model.price,
      contextWindow: file.model.context_window,
      engine: file.engineId,
      status: status.state,
      path: status.path,
      partBytes: status.state === 'partial' ? status.partBytes : null,
    }));
    process.stdout.write(`${JSON.stringify({ modelsDirectory, models, otherFiles }, null, 2)}\n`);
    return;
  }
  const table = [['ID', 'FAMILY', 'SIZE', 'CONTEXT', '$/M IN', '$/M OUT', 'SUPPORTS', 'FILE']];
  for (const { file, status } of rows) table.push(tableRow(file, status));
  const lines = [formatTable(table), '', `Models directory: ${modelsDirectory}`];
  if (otherFiles.length > 0)
    lines.push(`Other GGUF files there: ${otherFiles.map((file) => `${file.file} (${formatBytes(file.sizeBytes)})`).join(', ')}`);
  lines.push('Fetch a model with: taskgate models pull <id>');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A catalog file is judged by the catalog's size; a file the config names, by being there. */
function fileStatus(modelsDirectory: string, file: ConfiguredModelFile): ModelFileStatus {
  if (file.catalog !== null) return modelFileStatus(modelsDirectory, file.catalog);
  const size = fileSize(file.path);
  return size === null ? { state: 'missing', path: file.path } : { state: 'present', path: file.path, sizeBytes: size };
}

function tableRow({ model, catalog }: ConfiguredModelFile, status: ModelFileStatus): string[] {
  const context = model.context_window % 1024 === 0 ? `${model.context_window / 1024}K` : String(model.context_window);
  const size = catalog?.sizeBytes ?? (status.state === 'present' ? status.sizeBytes : null);
  const file =
    status.state === 'present'
      ? `present ${status.path}`
      : status.state === 'partial'
        ? `partial ${Math.floor(status.fraction * 100)}%`
        : status.state === 'wrong_size'
          ? `wrong size (${status.sizeBytes} bytes) ${status.path}`
          : catalog === null
            ? `missing ${status.path}`
            : 'missing';
  return [
    model.id,
    catalog?.family ?? '-',
    size === null ? '?' : formatBytes(size),
    context,
    String(model.price.input),
    String(model.price.output),
    model.supports.join(','),
    file,
  ];
}

function ggufFilesIn(directory: string): Array<{ file: string; path: string; sizeBytes: number }> {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.toLowerCase().endsWith('.gguf'))
    .map((name) => ({ file: name, path: join(directory, name), sizeBytes: fileSize(join(directory, name)) }))
    .filter((entry): entry is { file: string; path: string; sizeBytes: number } => entry.sizeBytes !== null)
    .sort((left, right) => left.file.localeCompare(right.file));
}
