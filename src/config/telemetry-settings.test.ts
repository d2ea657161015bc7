import { describe, expect, it } from 'vitest';
import { parseConfig } from './load-config.js';
import { telemetrySettings } from './telemetry-settings.js';

const config = (telemetry = '') => parseConfig(telemetry, {}, 'test');

describe('telemetrySettings', () => {
  it('is off without an endpoint, in the config or the environment', () => {
    expect(telemetrySettings(config(), {})).toBeNull();
    expect(telemetrySettings(config(), { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'x' })).toBeNull();
  });

  it('appends /v1/traces to a base endpoint, and takes a traces endpoint as it is', () => {
    expect(telemetrySettings(config('telemetry: { otlp: { endpoint: "http://collector:4318/" } }'), {})).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'taskgate',
    });
    expect(telemetrySettings(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example' })?.tracesUrl).toBe(
      'https://otlp.example/v1/traces',
    );
    const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/in' };
    expect(telemetrySettings(config('telemetry: { otlp: { endpoint: "http://collector:4318" } }'), both)?.tracesUrl).toBe(
      'https://traces.example/in',
    );
  });

  it('lets the environment override protocol and headers, and name the service', () => {
    const settings = telemetrySettings(
      config('telemetry: { otlp: { endpoint: "http://collector:4318", protocol: http/protobuf, headers: { x-team: a, x-key: config } } }'),
      {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'X-Key=from%20env, x-other=1',
        OTEL_SERVICE_NAME: 'edge-gateway',
      },
    );
    expect(settings).toMatchObject({
      protocol: 'http/json',
      headers: { 'x-team': 'a', 'x-key': 'from env', 'x-other': '1' },
      serviceName: 'edge-gateway',
    });
  });

  it('is off with OTEL_SDK_DISABLED=true', () => {
    expect(
      telemetrySettings(config('telemetry: { otlp: { endpoint: "http://collector:4318" } }'), { OTEL_SDK_DISABLED: 'true' }),
    ).toBeNull();
  });

  it('rejects gRPC, a bad URL, bad headers and unknown keys, naming the setting', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(() => telemetrySettings(config(), { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/,
    );
    expect(() => telemetrySettings(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
    );
    expect(() => telemetrySettings(config(), { ...on, OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS must be key=value/,
    );
    expect(() => config('telemetry: { otlp: { endpoint: "http://collector:4318", insecure: true } }')).toThrow(
      /telemetry\.otlp: unknown key "insecure"/,
    );
    expect(() => config('telemetry: { otlp: { protocol: grpc } }')).toThrow(/telemetry\.otlp\.protocol/);
  });
});
