import { hostname } from 'node:os';
import type { IdGenerator, Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import {
  type Attributes,
  type Context,
  disableTracing,
  enableTracing,
  type Link,
  ROOT_CONTEXT,
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
export interface Tracing {
  protocol: string;
  /** Where spans go, as configured (an environment variable's name or the config's address). */
  endpoint: string;
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
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
): Promise<Tracing | undefined> {
  if (!tracingWanted(settings, env)) return undefined;
  const protocol = traceProtocol(settings, env);
  checkSampler(env);
  const fromEnv = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const url = fromEnv ? undefined : `${settings!.endpoint!.replace(/\/+$/, '')}/v1/traces`;
  const [{ NodeTracerProvider }, sdk, resources, exporterModule] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const exporter = new exporterModule.OTLPTraceExporter(url ? { url } : {});
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
  const roots = new DecidedRoots(configuredSampler(sdk, settings, env), new sdk.RandomIdGenerator(), sdk);
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
    sampler: roots,
    idGenerator: roots,
  });
  // The W3C trace-context propagator and a context manager without async_hooks, as globals.
  const contextManager = new SyncContextManager();
  provider.register({ contextManager });
  enableTracing('entigen', service.version, contextManager, undefined, (name, kind) => roots.sampleRoot(name, kind));
  return {
    protocol,
    endpoint:
      url ??
      (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    flush: () => provider.forceFlush(),
    async shutdown() {
      disableTracing();
      await provider.shutdown();
    },
  };
}

type Sdk = typeof import('@opentelemetry/sdk-trace-base');

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, built from the SDK's own
 * samplers as the SDK builds it (parent-based always-on by default, a blank ratio is 1), or
 * the parent-based ratio of `telemetry.sampleRatio` when no variable names one.
 */
export function configuredSampler(sdk: Sdk, settings: TracingSettings | undefined, env: NodeJS.ProcessEnv): Sampler {
  const named = env.OTEL_TRACES_SAMPLER?.trim();
  if (!named && settings?.sampleRatio !== undefined)
    return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(settings.sampleRatio) });
  const ratio = () => new sdk.TraceIdRatioBasedSampler(Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || 1));
  switch (named || 'parentbased_always_on') {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio() });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

/**
 * New traces decided before a span is made. `sampleRoot` asks the configured sampler about a
 * fresh trace id; only a kept trace reaches the SDK, whose tracer then takes that very id (this is
 * its id generator) and gets the same decision back (this is its sampler), so a ratio stays a
 * decision on the trace id, as the specification has it. A span with a parent goes to the
 * configured sampler unchanged.
 */
export class DecidedRoots implements Sampler, IdGenerator {
  /** The id the next root span takes, and the decision its sampling gets back. */
  private pendingId: string | undefined;
  private decided: { traceId: string; result: SamplingResult } | undefined;

  constructor(
    private readonly sampler: Sampler,
    private readonly ids: IdGenerator,
    private readonly sdk: Pick<Sdk, 'SamplingDecision'>,
  ) {}

  /** Whether a new trace is sampled; when it is, the next root span takes its id and decision. */
  sampleRoot(name: string, kind: SpanKind): boolean {
    const traceId = this.ids.generateTraceId();
    const result = this.sampler.shouldSample(ROOT_CONTEXT, traceId, name, kind, {}, []);
    if (result.decision === this.sdk.SamplingDecision.NOT_RECORD) return false;
    this.pendingId = traceId;
    this.decided = { traceId, result };
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
    const decided = this.decided;
    if (decided !== undefined && decided.traceId === traceId) {
      this.decided = undefined;
      return decided.result;
    }
    return this.sampler.shouldSample(context, traceId, name, kind, attributes, links);
  }

  generateTraceId(): string {
    // Taken once, so no later trace can reuse a decided id.
    const traceId = this.pendingId;
    if (traceId === undefined) return this.ids.generateTraceId();
    this.pendingId = undefined;
    return traceId;
  }

  generateSpanId(): string {
    return this.ids.generateSpanId();
  }

  toString(): string {
    return this.sampler.toString();
  }
}
