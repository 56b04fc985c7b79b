import { describe, expect, it } from 'vitest';
import { checkSampler, traceProtocol, tracingWanted } from './startTracing.js';
import { activeContext, inSpan, tracingOn } from './tracing.js';

describe('tracing settings', () => {
  it('are on with an exporter endpoint from the environment or the config, and off with OTEL_SDK_DISABLED', () => {
    expect(tracingWanted(undefined, {})).toBe(false);
    expect(tracingWanted(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
    expect(tracingWanted(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ endpoint: 'http://c:4318' }, {})).toBe(true);
    expect(tracingWanted({ endpoint: 'http://c:4318' }, { OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingWanted({ endpoint: 'http://c:4318' }, { OTEL_SDK_DISABLED: 'false' })).toBe(true);
  });

  it('take the protocol from the traces variable, then the general one, then the config', () => {
    expect(traceProtocol(undefined, {})).toBe('http/protobuf');
    expect(traceProtocol({ protocol: 'http/json' }, {})).toBe('http/json');
    expect(traceProtocol({ protocol: 'http/json' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe(
      'http/protobuf',
    );
    expect(
      traceProtocol(undefined, {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toBe('http/json');
    expect(() => traceProtocol(undefined, { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toThrow(
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is "grpc": entigen exports traces over OTLP/HTTP, http/protobuf or http/json',
    );
  });

  it('refuse a sampler or a ratio the SDK would silently replace', () => {
    expect(() => checkSampler({})).not.toThrow();
    expect(() =>
      checkSampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }),
    ).not.toThrow();
    expect(() => checkSampler({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      'OTEL_TRACES_SAMPLER is "sometimes": use one of',
    );
    expect(() => checkSampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' })).toThrow(
      'OTEL_TRACES_SAMPLER_ARG is "10%": a ratio from 0 to 1',
    );
    expect(() => checkSampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow();
  });

  it('leave the code as it is when off: no span, no traceparent, the function called with none', async () => {
    expect(tracingOn()).toBe(false);
    expect(inSpan('x', {}, (span) => span)).toBeUndefined();
    await expect(inSpan('x', {}, async () => 7)).resolves.toBe(7);
    expect(() =>
      inSpan('x', {}, () => {
        throw new Error('passes through');
      }),
    ).toThrow('passes through');
    expect(activeContext()).toBeUndefined();
  });
});
