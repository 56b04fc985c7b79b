import { hostname } from 'node:os';
import type { IdGenerator, Sampler, SamplingDecision, SamplingResult } from '@opentelemetry/sdk-trace-base';
import { ExportWarnings, type Warn } from './exportWarnings.js';
import { DRAWN, drawKeptTrace, hexWord, ratioBound, type SamplingPlan } from './sampling.js';
import type { Running } from './startRecording.js';
import {
  type Attributes,
  type Context,
  disableTracing,
  enableTracing,
  type Link,
  type SpanKind,
  SyncContextManager,
} from './tracing.js';

/** `telemetry:` in entigen.config.yaml; the OpenTelemetry environment variables override it. */
export interface TracingSettings {
  /** The collector's base address (`/v1/traces` is added), as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint?: string;
  protocol?: string;
  /** The share of new traces sampled (0 to 1), parent-based; OTEL_TRACES_SAMPLER overrides it. */
  sampleRatio?: number;
}

export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/** A running tracer provider: flushed and shut down with the server. */
export interface Tracing extends Running {
  protocol: string;
  /** Where spans go, as configured (an environment variable's name or the config's address). */
  endpoint: string;
}

/** Whether the settings and environment ask for traces (an exporter endpoint and no OTEL_SDK_DISABLED). */
export function tracingWanted(settings: TracingSettings | undefined, env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || settings?.endpoint);
}

/** The exporter protocol the settings name; throws for any other (gRPC is not built in). */
export function traceProtocol(settings: TracingSettings | undefined, env: NodeJS.ProcessEnv): string {
  const [source, value] = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL]
    : env.OTEL_EXPORTER_OTLP_PROTOCOL
      ? ['OTEL_EXPORTER_OTLP_PROTOCOL', env.OTEL_EXPORTER_OTLP_PROTOCOL]
      : ['telemetry.protocol', settings?.protocol ?? 'http/protobuf'];
  const protocol = value.trim();
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(protocol))
    throw new Error(
      `${source} is "${protocol}": entigen exports traces over OTLP/HTTP, ${TRACE_PROTOCOLS.join(' or ')} (point it at the collector's HTTP port, 4318)`,
    );
  return protocol;
}

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/**
 * Refuses a sampler the SDK would replace by its default without a word: an unknown
 * OTEL_TRACES_SAMPLER, or a ratio outside 0 to 1 in OTEL_TRACES_SAMPLER_ARG.
 */
export function checkSampler(env: NodeJS.ProcessEnv): void {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim();
  if (!sampler) return;
  if (!SAMPLERS.includes(sampler))
    throw new Error(`OTEL_TRACES_SAMPLER is "${sampler}": use one of ${SAMPLERS.join(', ')}`);
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!sampler.endsWith('traceidratio') || !arg) return;
  const ratio = Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new Error(`OTEL_TRACES_SAMPLER_ARG is "${arg}": a ratio from 0 to 1, such as 0.1`);
}

/**
 * Starts OpenTelemetry's Node SDK when the settings or the environment name an exporter, as the
 * OpenTelemetry specification spells it: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _PROTOCOL,
 * _HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG),
 * OTEL_BSP_* and OTEL_SDK_DISABLED. Undefined (and nothing of the SDK loaded) otherwise.
 */
export async function startTracing(
  settings: TracingSettings | undefined,
  env: NodeJS.ProcessEnv,
  service: { name: string; version: string },
  /** Where a failing export is told (the server's log), at most once a minute. */
  warn: Warn = () => undefined,
): Promise<Tracing | undefined> {
  if (!tracingWanted(settings, env)) return undefined;
  const protocol = traceProtocol(settings, env);
  checkSampler(env);
  const fromEnv = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const url = fromEnv ? undefined : `${settings!.endpoint!.replace(/\/+$/, '')}/v1/traces`;
  const [sdk, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  // The app's name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise (envDetector).
  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({
        'service.name': env.OTEL_SERVICE_NAME || service.name,
        'service.version': service.version,
        'service.instance.id': `${hostname()}:${process.pid}`,
      }),
    )
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  await resource.waitForAsyncAttributes?.();
  const configured = configuredSampler(sdk, settings, env);
  const endpoint =
    url ??
    (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const warnings = new ExportWarnings(warn);
  const started =
    protocol === 'http/json'
      ? await startSdkTracing(sdk, resource, configured, url, env, service.version, warnings)
      : await (await import('./startRecording.js')).startRecording(
          resource.attributes,
          configured,
          url,
          env,
          service.version,
          warnings,
        );
  return {
    protocol,
    endpoint,
    flush: started.flush,
    async shutdown() {
      await started.shutdown();
      warnings.stop();
    },
  };
}

/**
 * OTLP JSON: the SDK's spans and batch processor; each batch serialized by the SDK's JSON
 * serializer and sent from the export thread, as protobuf batches are (spanExporter.ts).
 */
async function startSdkTracing(
  sdk: Sdk,
  resource: import('@opentelemetry/resources').Resource,
  configured: ConfiguredSampler,
  url: string | undefined,
  env: NodeJS.ProcessEnv,
  version: string,
  warnings: ExportWarnings,
): Promise<Running> {
  const [{ NodeTracerProvider }, { JsonTraceSerializer }, { ExportResultCode }, { ThreadedExporter }, api] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/otlp-transformer'),
      import('@opentelemetry/core'),
      import('./spanExporter.js'),
      import('@opentelemetry/api'),
    ]);
  // The thread reports a failed export to the log itself (warnings.failed).
  const thread = new ThreadedExporter(
    { url, protocol: 'http/json', resource: resource.attributes },
    env,
    warnings.failed,
  );
  const exporter: import('@opentelemetry/sdk-trace-base').SpanExporter = {
    export: (spans, done) =>
      // The serializer's bytes are a buffer of their own (a TextEncoder's), handed over whole.
      thread.sendRequest(JsonTraceSerializer.serializeRequest(spans) as Uint8Array, spans.length, (error) =>
        done(
          error === undefined
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error: new Error(error) },
        ),
      ),
    shutdown: () => thread.shutdown(),
    forceFlush: () => thread.flush(),
  };
  const roots = new DecidedRoots(configured, new sdk.RandomIdGenerator(), sdk.SamplingDecision.RECORD_AND_SAMPLED);
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
    sampler: roots,
    idGenerator: roots,
  });
  // The W3C trace-context propagator and a context manager without async_hooks, as globals.
  const contextManager = new SyncContextManager();
  provider.register({ contextManager });
  enableTracing('entigen', version, contextManager, provider, () => roots.sampleRoot());
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      disableTracing();
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

type Sdk = typeof import('@opentelemetry/sdk-trace-base');

/** The sampler the settings name, and the share of new traces it keeps (its root's ratio). */
export interface ConfiguredSampler extends SamplingPlan {
  sampler: Sampler;
}

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, built from the SDK's own
 * samplers as the SDK builds it (parent-based always-on by default, a blank ratio is 1), or
 * the parent-based ratio of `telemetry.sampleRatio` when no variable names one.
 */
export function configuredSampler(
  sdk: Sdk,
  settings: TracingSettings | undefined,
  env: NodeJS.ProcessEnv,
): ConfiguredSampler {
  const named = env.OTEL_TRACES_SAMPLER?.trim();
  const byRatio = (ratio: number, parentBased: boolean): ConfiguredSampler => {
    const root = new sdk.TraceIdRatioBasedSampler(ratio);
    return { sampler: parentBased ? new sdk.ParentBasedSampler({ root }) : root, rootRatio: ratio, parentBased };
  };
  if (!named && settings?.sampleRatio !== undefined) return byRatio(settings.sampleRatio, true);
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || 1);
  switch (named || 'parentbased_always_on') {
    case 'always_on':
      return { sampler: new sdk.AlwaysOnSampler(), rootRatio: 1, parentBased: false };
    case 'always_off':
      return { sampler: new sdk.AlwaysOffSampler(), rootRatio: 0, parentBased: false };
    case 'traceidratio':
      return byRatio(ratio, false);
    case 'parentbased_always_off':
      return {
        sampler: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
        rootRatio: 0,
        parentBased: true,
      };
    case 'parentbased_traceidratio':
      return byRatio(ratio, true);
    default:
      return {
        sampler: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
        rootRatio: 1,
        parentBased: true,
      };
  }
}

/**
 * New traces decided before a span is made, so a request left out costs four random numbers.
 * The decision is the SDK's TraceIdRatioBased one (the four 32-bit words of the trace id XORed,
 * below the ratio's bound), made on the words before they are written as an id; a kept trace
 * reaches the SDK, whose tracer then takes that very id (this is its id generator) and gets the
 * decision back (this is its sampler). A span with a parent goes to the configured sampler.
 */
export class DecidedRoots implements Sampler, IdGenerator {
  /** Trace ids whose words XOR below this are kept, as TraceIdRatioBasedSampler bounds them. */
  private readonly bound: number;
  /** The id the next root span takes, its sampling already decided. */
  private decidedId: string | undefined;
  /** What the SDK's ratio sampler answers for a kept trace id. */
  private readonly kept: SamplingResult;

  constructor(
    private readonly configured: ConfiguredSampler,
    private readonly ids: IdGenerator,
    sampled: SamplingDecision,
  ) {
    this.kept = Object.freeze({ decision: sampled });
    this.bound = ratioBound(configured.rootRatio);
  }

  /** Whether a new trace is sampled; when it is, the next root span takes its id. */
  sampleRoot(): boolean {
    if (!drawKeptTrace(this.bound)) return false;
    this.decidedId = hexWord(DRAWN[0]) + hexWord(DRAWN[1]) + hexWord(DRAWN[2]) + hexWord(DRAWN[3]);
    return true;
  }

  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (traceId === this.decidedId) {
      this.decidedId = undefined;
      return this.kept;
    }
    return this.configured.sampler.shouldSample(context, traceId, name, kind, attributes, links);
  }

  generateTraceId(): string {
    // The tracer asks the sampler right after, which lets the id go: no later trace reuses it.
    return this.decidedId ?? this.ids.generateTraceId();
  }

  generateSpanId(): string {
    return this.ids.generateSpanId();
  }

  toString(): string {
    return this.configured.sampler.toString();
  }
}
