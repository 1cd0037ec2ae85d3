import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/**
 * The real OpenTelemetry SDK as a test sees it: a MeterProvider whose reader exports into the
 * SDK's InMemoryMetricExporter (cumulative), read on demand with `collect()`, and a tracer whose
 * ended spans land in an InMemorySpanExporter, with the AsyncLocalStorage context manager that a
 * Node service registers.
 */
export class Telemetry {
  readonly exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when asked (forceFlush): the interval is never reached in a test.
  readonly reader = new PeriodicExportingMetricReader({ exporter: this.exporter, exportIntervalMillis: 3_600_000 });
  readonly meterProvider = new MeterProvider({ readers: [this.reader] });
  readonly spans = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(this.spans)] });
  private readonly contextManager = new AsyncLocalStorageContextManager();

  constructor() {
    context.setGlobalContextManager(this.contextManager.enable());
  }

  /** Every metric recorded so far (cumulative), by name. */
  async collect(): Promise<Map<string, MetricData>> {
    this.exporter.reset();
    await this.reader.forceFlush();
    const byName = new Map<string, MetricData>();
    for (const resource of this.exporter.getMetrics()) {
      for (const scope of resource.scopeMetrics)
        for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
    }
    return byName;
  }

  /** The data points of one metric (none when it was never recorded). */
  async points(name: string): Promise<DataPoint<unknown>[]> {
    return (await this.collect()).get(name)?.dataPoints ?? [];
  }

  /** The one data point of a metric whose attributes include `attributes`; throws unless exactly one matches. */
  async point(name: string, attributes: Record<string, unknown> = {}): Promise<DataPoint<unknown>> {
    const matching = (await this.points(name)).filter((p) =>
      Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
    );
    if (matching.length !== 1)
      throw new Error(`${matching.length} data points of ${name} match ${JSON.stringify(attributes)}`);
    return matching[0];
  }

  /** Runs `fn` inside a new recording span made active, ends the span, and returns it. */
  inSpan<T>(name: string, fn: (span: Span) => T): T {
    const span = this.tracerProvider.getTracer('test').startSpan(name);
    return context.with(trace.setSpan(context.active(), span), () => fn(span));
  }

  finishedSpans(): ReadableSpan[] {
    return this.spans.getFinishedSpans();
  }

  async shutdown(): Promise<void> {
    await this.meterProvider.shutdown();
    await this.tracerProvider.shutdown();
    this.contextManager.disable();
    context.disable();
  }
}

/** A histogram data point's value, typed. */
export function histogram(point: DataPoint<unknown>): Histogram {
  return point.value as Histogram;
}
