/**
 * The default model catalog of the embedded CPU engine: well-known small
 * instruct models as single GGUF files, each pinned to one Hugging Face
 * revision with its exact byte size and sha256, so `taskgate models pull <id>`
 * can verify what it fetched before it puts the file in place.
 *
 * Where the checksums come from: this list was written on a machine with no
 * route to Hugging Face. Each sha256 and size is the LFS object id and size
 * that Hugging Face publishes for that file ("SHA256" and size on the file
 * page, `lfs.oid` / `lfs.size` in its API), as recorded by several independent
 * public projects that pin the same file (found by code search; at least two
 * agree on every value below, most of them five or more, several pinned to the
 * same revision as here). A model whose checksum could not be sourced is not
 * in the list. If Hugging Face ever serves other bytes at these revisions, the
 * pull fails with a checksum mismatch instead of installing them.
 */

/** What a model can do beyond plain chat, in the gateway catalog's terms. */
export type DefaultModelCapability = 'tools' | 'json';

export interface DefaultModel {
  /** Canonical id, as clients name it and as `taskgate models pull` takes it. */
  id: string;
  /** Who trained the model (lower case): 'qwen', 'meta', 'huggingfacetb'. */
  provider: string;
  /**
   * Model family. Models of one family share training data and blind spots, so
   * the router's judge must come from another family than the model it grades.
   */
  family: string;
  /** Other names that resolve to this model (upstream repo names, Ollama-style tags); matched case-insensitively. */
  aliases: string[];
  /** Parameter count in billions, from the model card; the price is derived from it. */
  parametersInBillions: number;
  /** Quantization of the GGUF file. */
  quantization: 'Q4_K_M' | 'Q8_0';
  /** File name under `<data dir>/models/`: the upstream file name, unchanged. */
  file: string;
  /** HTTPS source of the file: a Hugging Face `resolve` URL pinned to a revision, so its checksum cannot drift. */
  url: string;
  /** Exact size of the file in bytes. */
  sizeBytes: number;
  /** Lower-case hex sha256 of the whole file. */
  sha256: string;
  /** Context window the model was trained for, in tokens (the engine may run with less). */
  contextWindow: number;
  /** USD per million tokens on our own CPU capacity; see `cpuPrice`. */
  price: { input: number; output: number };
  /**
   * 'json': JSON output, which the engine enforces with a grammar, so every
   * model has it. 'tools': the model was trained for function calling and its
   * chat template carries tool definitions (Qwen2.5, Llama 3.2).
   */
  supports: DefaultModelCapability[];
  /** The model a first start fetches when no model is on disk (one per catalog; else the first entry). */
  recommended?: boolean;
}

/** What one hour of the CPU machine costs: an 8-vCPU on-demand cloud VM. */
const MACHINE_USD_PER_HOUR = 0.34;
/**
 * Tokens a second that machine generates for a 1-billion-parameter Q4_K_M
 * model, summed over a few parallel sequences. Generation on a CPU is bound by
 * memory bandwidth (every weight is read once per token), so it scales as one
 * over the parameter count.
 */
const OUTPUT_TOKENS_PER_SECOND_AT_ONE_BILLION = 60;
/** Prompt tokens are evaluated in batches, about ten times faster than tokens are generated. */
const PROMPT_SPEEDUP = 10;

/**
 * USD per million tokens for a model of this size on our CPU machine:
 * output = machine $/hour ÷ 3600 × 1,000,000 × parameters ÷ tokens/s at 1B
 * (0.34 / 3600 × 1e6 / 60 ≈ $1.57 per billion parameters), input = output ÷ 10.
 * An estimate for routing between our own models, not a measurement; a config
 * entry that serves the model sets its own price.
 */
export function cpuPrice(parametersInBillions: number): { input: number; output: number } {
  const output = ((MACHINE_USD_PER_HOUR / 3600) * 1_000_000 * parametersInBillions) / OUTPUT_TOKENS_PER_SECOND_AT_ONE_BILLION;
  return { input: roundPrice(output / PROMPT_SPEEDUP), output: roundPrice(output) };
}

function roundPrice(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

type Entry = Omit<DefaultModel, 'price'>;

const entries: Entry[] = [
  // SmolLM2 (Apache-2.0). Hugging Face's own GGUF repos carry only some sizes
  // and quantizations, so all three come from bartowski's Q4_K_M builds.
  {
    id: 'smollm2-135m-instruct',
    provider: 'huggingfacetb',
    family: 'smollm2',
    aliases: ['HuggingFaceTB/SmolLM2-135M-Instruct', 'bartowski/SmolLM2-135M-Instruct-GGUF', 'smollm2:135m'],
    parametersInBillions: 0.135,
    quantization: 'Q4_K_M',
    file: 'SmolLM2-135M-Instruct-Q4_K_M.gguf',
    url: 'https://huggingface.co/bartowski/SmolLM2-135M-Instruct-GGUF/resolve/09816acd5d99df7be770d85ea30822623dab342c/SmolLM2-135M-Instruct-Q4_K_M.gguf',
    sizeBytes: 105_454_432,
    sha256: '2e8040ceae7815abe0dcb3540b9995eaa1fa0d2ca9e797d0a635ae4433c68c2d',
    contextWindow: 8_192,
    supports: ['json'],
  },
  {
    id: 'smollm2-360m-instruct',
    provider: 'huggingfacetb',
    family: 'smollm2',
    aliases: ['HuggingFaceTB/SmolLM2-360M-Instruct', 'bartowski/SmolLM2-360M-Instruct-GGUF', 'smollm2:360m'],
    parametersInBillions: 0.362,
    quantization: 'Q4_K_M',
    file: 'SmolLM2-360M-Instruct-Q4_K_M.gguf',
    url: 'https://huggingface.co/bartowski/SmolLM2-360M-Instruct-GGUF/resolve/7be6f65f1db715fe5dc5a4634c0d459b4eed42ec/SmolLM2-360M-Instruct-Q4_K_M.gguf',
    sizeBytes: 270_590_880,
    sha256: '2fa3f013dcdd7b99f9b237717fa0b12d75bbb89984cc1274be1471a465bac9c2',
    contextWindow: 8_192,
    supports: ['json'],
  },
  {
    id: 'smollm2-1.7b-instruct',
    provider: 'huggingfacetb',
    family: 'smollm2',
    aliases: ['HuggingFaceTB/SmolLM2-1.7B-Instruct', 'bartowski/SmolLM2-1.7B-Instruct-GGUF', 'smollm2:1.7b'],
    parametersInBillions: 1.71,
    quantization: 'Q4_K_M',
    file: 'SmolLM2-1.7B-Instruct-Q4_K_M.gguf',
    url: 'https://huggingface.co/bartowski/SmolLM2-1.7B-Instruct-GGUF/resolve/1f03464768bfcc0319fc50da8ff5fb20b6417ba2/SmolLM2-1.7B-Instruct-Q4_K_M.gguf',
    sizeBytes: 1_055_609_824,
    sha256: '77665ea4815999596525c636fbeb56ba8b080b46ae85efef4f0d986a139834d7',
    contextWindow: 8_192,
    supports: ['json'],
  },
  // Qwen2.5 (0.5B and 1.5B Apache-2.0, 3B Qwen Research License): Qwen's own GGUF repos.
  {
    id: 'qwen2.5-0.5b-instruct',
    provider: 'qwen',
    family: 'qwen2.5',
    aliases: ['Qwen/Qwen2.5-0.5B-Instruct', 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', 'qwen2.5:0.5b'],
    parametersInBillions: 0.49,
    quantization: 'Q4_K_M',
    file: 'qwen2.5-0.5b-instruct-q4_k_m.gguf',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/9217f5db79a29953eb74d5343926648285ec7e67/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    sizeBytes: 491_400_032,
    sha256: '74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db',
    contextWindow: 32_768,
    supports: ['tools', 'json'],
    // The smallest model that follows instructions, calls tools and writes JSON well enough to try taskgate with.
    recommended: true,
  },
  {
    id: 'qwen2.5-1.5b-instruct',
    provider: 'qwen',
    family: 'qwen2.5',
    aliases: ['Qwen/Qwen2.5-1.5B-Instruct', 'Qwen/Qwen2.5-1.5B-Instruct-GGUF', 'qwen2.5:1.5b'],
    parametersInBillions: 1.54,
    quantization: 'Q4_K_M',
    file: 'qwen2.5-1.5b-instruct-q4_k_m.gguf',
    url: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    sizeBytes: 1_117_320_736,
    sha256: '6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e',
    contextWindow: 32_768,
    supports: ['tools', 'json'],
  },
  {
    id: 'qwen2.5-3b-instruct',
    provider: 'qwen',
    family: 'qwen2.5',
    aliases: ['Qwen/Qwen2.5-3B-Instruct', 'Qwen/Qwen2.5-3B-Instruct-GGUF', 'qwen2.5:3b'],
    parametersInBillions: 3.09,
    quantization: 'Q4_K_M',
    file: 'qwen2.5-3b-instruct-q4_k_m.gguf',
    url: 'https://huggingface.co/Qwen/Qwen2.5-3B-Instruct-GGUF/resolve/7dabda4d13d513e3e842b20f0d435c732f172cbe/qwen2.5-3b-instruct-q4_k_m.gguf',
    sizeBytes: 2_104_932_768,
    sha256: '626b4a6678b86442240e33df819e00132d3ba7dddfe1cdc4fbb18e0a9615c62d',
    contextWindow: 32_768,
    supports: ['tools', 'json'],
  },
  // Llama 3.2 (Llama 3.2 Community License). Meta publishes no GGUF; bartowski's are the usual ungated ones.
  {
    id: 'llama3.2-1b-instruct',
    provider: 'meta',
    family: 'llama3.2',
    aliases: ['meta-llama/Llama-3.2-1B-Instruct', 'bartowski/Llama-3.2-1B-Instruct-GGUF', 'llama3.2:1b', 'llama-3.2-1b-instruct'],
    parametersInBillions: 1.24,
    quantization: 'Q4_K_M',
    file: 'Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/067b946cf014b7c697f3654f621d577a3e3afd1c/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    sizeBytes: 807_694_464,
    sha256: '6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83',
    contextWindow: 131_072,
    supports: ['tools', 'json'],
  },
  {
    id: 'llama3.2-3b-instruct',
    provider: 'meta',
    family: 'llama3.2',
    aliases: ['meta-llama/Llama-3.2-3B-Instruct', 'bartowski/Llama-3.2-3B-Instruct-GGUF', 'llama3.2:3b', 'llama-3.2-3b-instruct'],
    parametersInBillions: 3.21,
    quantization: 'Q4_K_M',
    file: 'Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    url: 'https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/5ab33fa94d1d04e903623ae72c95d1696f09f9e8/Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    sizeBytes: 2_019_377_696,
    sha256: '6c1a2b41161032677be168d354123594c0e6e67d2b9227c84f296ad037c728ff',
    contextWindow: 131_072,
    supports: ['tools', 'json'],
  },
];

export const DEFAULT_MODELS: readonly DefaultModel[] = entries.map((entry) => ({ ...entry, price: cpuPrice(entry.parametersInBillions) }));

/**
 * The catalog model a name means: its id, an alias, or `<provider>/<id>`,
 * compared case-insensitively (repo names are typed in every case).
 */
export function findDefaultModel(name: string, models: readonly DefaultModel[] = DEFAULT_MODELS): DefaultModel | undefined {
  const wanted = name.toLowerCase();
  return models.find((model) =>
    [model.id, `${model.provider}/${model.id}`, ...model.aliases].some((candidate) => candidate.toLowerCase() === wanted),
  );
}

/** What a first start fetches: the catalog's recommended model, else its first. */
export function recommendedModel(models: readonly DefaultModel[]): DefaultModel | undefined {
  return models.find((model) => model.recommended === true) ?? models[0];
}
