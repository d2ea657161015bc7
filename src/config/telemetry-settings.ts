/**
 * Where taskgate's spans go, resolved once from `telemetry.otlp` and the
 * standard OpenTelemetry variables, which override the config as
 * `TASKGATE_DATABASE_URL` overrides `store:`:
 *
 *   OTEL_SDK_DISABLED=true                 off, whatever else is set
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT     the full URL of the traces endpoint
 *   OTEL_EXPORTER_OTLP_ENDPOINT            a base URL: spans go to <it>/v1/traces
 *   telemetry.otlp.endpoint                the same, from the config
 *   OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL   http/protobuf (default) or http/json
 *   OTEL_EXPORTER_OTLP_(TRACES_)HEADERS    key=value,… (values URL-encoded), over the config's headers
 *   OTEL_SERVICE_NAME                      service.name, default "taskgate"
 */
import type { TelemetrySettings } from '../telemetry/telemetry.js';
import type { Config } from './config-schema.js';
import { ConfigError } from './load-config.js';

type Environment = Readonly<Record<string, string | undefined>>;

const protocols = ['http/protobuf', 'http/json'] as const;

export function telemetrySettings(config: Config, environment: Environment): TelemetrySettings | null {
  const value = (name: string) => {
    const text = environment[name]?.trim();
    return text === undefined || text === '' ? undefined : text;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const tracesUrl =
    checkedUrl(value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ??
    tracesPath(checkedUrl(value('OTEL_EXPORTER_OTLP_ENDPOINT'), 'OTEL_EXPORTER_OTLP_ENDPOINT') ?? config.telemetry.otlp.endpoint);
  if (tracesUrl === undefined) return null;
  const protocolName =
    value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = value(protocolName) ?? config.telemetry.otlp.protocol;
  if (!isProtocol(protocol))
    throw new ConfigError(`${protocolName} must be http/protobuf or http/json (taskgate does not export over gRPC), got "${protocol}"`);
  return {
    tracesUrl,
    protocol,
    headers: {
      ...config.telemetry.otlp.headers,
      ...parseHeaders(value('OTEL_EXPORTER_OTLP_HEADERS'), 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...parseHeaders(value('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    serviceName: value('OTEL_SERVICE_NAME') ?? 'taskgate',
  };
}

function isProtocol(text: string): text is TelemetrySettings['protocol'] {
  return (protocols as readonly string[]).includes(text);
}

function checkedUrl(text: string | undefined, name: string): string | undefined {
  if (text === undefined) return undefined;
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol))
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${text}"`);
  return text;
}

/** A base endpoint's traces path, as the OTLP exporter specification appends it. */
function tracesPath(base: string | undefined): string | undefined {
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** `key1=value1,key2=value2` with URL-encoded values (the OTLP exporter specification's format). */
function parseHeaders(text: string | undefined, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (text === undefined) return headers;
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = at === -1 ? '' : pair.slice(0, at).trim();
    if (key === '') throw new ConfigError(`${name} must be key=value pairs separated by commas`);
    try {
      headers[key.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of "${key}" is not valid URL encoding`);
    }
  }
  return headers;
}
