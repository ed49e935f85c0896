/**
 * A Temporal `MetricMeter` that keeps what is recorded, for unit tests of the activities' metrics
 * (`new MockActivityEnvironment(info, { metricMeter })`). Tags added through `withTags` (as the
 * SDK adds namespace, taskQueue and activityType) are merged into each record.
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */
import type {
  MetricCounter,
  MetricGauge,
  MetricHistogram,
  MetricMeter,
  MetricTags,
  NumericMetricValueType,
} from '@temporalio/common';

/** One value recorded: a counter's increment, a histogram's observation or a gauge's setting. */
export interface RecordedMetric {
  kind: 'counter' | 'histogram' | 'gauge';
  name: string;
  unit: string | undefined;
  description: string | undefined;
  value: number;
  tags: MetricTags;
}

export class RecordingMetricMeter implements MetricMeter {
  constructor(
    readonly records: RecordedMetric[] = [],
    private readonly tags: MetricTags = {},
  ) {}

  createCounter(name: string, unit?: string, description?: string): MetricCounter {
    const record = (value: number, tags: MetricTags) =>
      this.records.push({ kind: 'counter', name, unit, description, value, tags });
    const counter = (base: MetricTags): MetricCounter => ({
      name,
      unit,
      description,
      kind: 'counter',
      valueType: 'int',
      add: (value, extraTags = {}) => record(value, { ...this.tags, ...base, ...extraTags }),
      withTags: (tags) => counter({ ...base, ...tags }),
    });
    return counter({});
  }

  createHistogram(
    name: string,
    valueType: NumericMetricValueType = 'int',
    unit?: string,
    description?: string,
  ): MetricHistogram {
    const histogram = (base: MetricTags): MetricHistogram => ({
      name,
      unit,
      description,
      kind: 'histogram',
      valueType,
      record: (value, extraTags = {}) =>
        this.records.push({
          kind: 'histogram',
          name,
          unit,
          description,
          value,
          tags: { ...this.tags, ...base, ...extraTags },
        }),
      withTags: (tags) => histogram({ ...base, ...tags }),
    });
    return histogram({});
  }

  createGauge(
    name: string,
    valueType: NumericMetricValueType = 'int',
    unit?: string,
    description?: string,
  ): MetricGauge {
    const gauge = (base: MetricTags): MetricGauge => ({
      name,
      unit,
      description,
      kind: 'gauge',
      valueType,
      set: (value, extraTags = {}) =>
        this.records.push({
          kind: 'gauge',
          name,
          unit,
          description,
          value,
          tags: { ...this.tags, ...base, ...extraTags },
        }),
      withTags: (tags) => gauge({ ...base, ...tags }),
    });
    return gauge({});
  }

  withTags(tags: MetricTags): MetricMeter {
    return new RecordingMetricMeter(this.records, { ...this.tags, ...tags });
  }

  /** The records of metric `name`. */
  of(name: string): RecordedMetric[] {
    return this.records.filter((record) => record.name === name);
  }

  /** Sum of the values of `name` whose tags include `tags`. */
  sum(name: string, tags: MetricTags = {}): number {
    return this.of(name)
      .filter((record) => Object.entries(tags).every(([key, value]) => record.tags[key] === value))
      .reduce((total, record) => total + record.value, 0);
  }
}
