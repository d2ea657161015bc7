/**
 * The telemetry of one gateway: off without settings (nothing of the
 * OpenTelemetry SDK is loaded), else spans exported over OTLP/HTTP.
 */
import type { Logger } from '../log/logger.js';
import { createDisabledTelemetry } from './disabled-telemetry.js';
import type { Telemetry, TelemetrySettings } from './telemetry.js';

export interface TelemetryOptions {
  /** `gen_ai.provider.name` of an engine span: the engine's type (`openai` for any OpenAI-compatible server, `llama-cpp`), by engine id. */
  engineTypes: ReadonlyMap<string, string>;
  logger: Logger;
}

export async function createTelemetry(settings: TelemetrySettings | null, options: TelemetryOptions): Promise<Telemetry> {
  if (settings === null) return createDisabledTelemetry();
  const { createOtlpTelemetry } = await import('./otlp-telemetry.js');
  return createOtlpTelemetry(settings, options);
}
