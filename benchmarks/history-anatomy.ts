/**
 * Where a run's history bytes go (issue 34): for each recorded history (JSON, as `temporal workflow
 * show --output json`, the fixtures in test/fixtures/histories/, or `benchmark:peers
 * --save-histories DIR` write it), the events by type — how many, bytes serialized as protobuf,
 * bytes per event — and within each type the bytes of its larger fields, per event: the
 * activities' inputs and results, headers, user metadata (summaries), the worker's build id,
 * the server's request ids and sticky queue names. Nothing is started; it reads the files.
 *
 *   npx tsx benchmarks/history-anatomy.ts FILE [FILE…] [--fields N]   (N largest fields per type; default 6)
 *
 * Then, for each activity type, the mean bytes of its input and result payloads.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { argument } from './fleet-helpers';

const { HistoryEvent } = temporal.api.history.v1;
type Event = temporal.api.history.v1.IHistoryEvent;

const FIELDS = Number(argument('fields', '6'));
const files = process.argv
  .slice(2)
  .filter((value, index, all) => !value.startsWith('--') && all[index - 1] !== '--fields');

/** The protobuf bytes of one top-level field of an event (its `…Attributes` split into their own fields). */
function fieldBytes(event: Event): Map<string, number> {
  const sizes = new Map<string, number>();
  const plain = HistoryEvent.toObject(event as temporal.api.history.v1.HistoryEvent, { defaults: false });
  for (const [key, value] of Object.entries(plain)) {
    if (key.endsWith('Attributes') && value && typeof value === 'object') {
      const type = (temporal.api.history.v1 as unknown as Record<string, typeof HistoryEvent>)[
        key[0]!.toUpperCase() + key.slice(1)
      ];
      for (const [field, inner] of Object.entries(value as Record<string, unknown>)) {
        const size = type ? type.encode(type.fromObject({ [field]: inner })).finish().length : 0;
        sizes.set(field, size);
      }
    } else sizes.set(key, HistoryEvent.encode(HistoryEvent.fromObject({ [key]: value })).finish().length);
  }
  return sizes;
}

const eventTypeName = (event: Event) =>
  (temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType)).replace(/^EVENT_TYPE_/, '');
const payloadBytes = (payloads: temporal.api.common.v1.IPayloads | null | undefined) =>
  (payloads?.payloads ?? []).reduce((total, payload) => total + (payload.data?.length ?? 0), 0);

if (files.length === 0) {
  console.error('usage: npx tsx benchmarks/history-anatomy.ts FILE [FILE…] [--fields N]');
  process.exit(2);
}
for (const file of files) {
  const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
  const events = history.events ?? [];
  const total = temporal.api.history.v1.History.encode(history).finish().length;
  console.log(`\n${basename(file)}: ${events.length} events, ${total.toLocaleString('en-US')} bytes`);
  const byType = new Map<string, { count: number; bytes: number; fields: Map<string, number> }>();
  const activityTypes = new Map<string, string>();
  const payloads = new Map<string, { count: number; input: number; result: number }>();
  for (const event of events) {
    const name = eventTypeName(event);
    const entry = byType.get(name) ?? { count: 0, bytes: 0, fields: new Map<string, number>() };
    entry.count += 1;
    entry.bytes += HistoryEvent.encode(event as temporal.api.history.v1.HistoryEvent).finish().length;
    for (const [field, size] of fieldBytes(event)) entry.fields.set(field, (entry.fields.get(field) ?? 0) + size);
    byType.set(name, entry);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? '?';
      activityTypes.set(String(event.eventId), type);
      const sizes = payloads.get(type) ?? { count: 0, input: 0, result: 0 };
      sizes.count += 1;
      sizes.input += payloadBytes(scheduled.input);
      payloads.set(type, sizes);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const sizes = payloads.get(activityTypes.get(String(completed.scheduledEventId)) ?? '?');
      if (sizes) sizes.result += payloadBytes(completed.result);
    }
  }
  for (const [name, entry] of [...byType].sort((a, b) => b[1].bytes - a[1].bytes)) {
    const fields = [...entry.fields]
      .sort((a, b) => b[1] - a[1])
      .slice(0, FIELDS)
      .map(([field, size]) => `${field} ${Math.round(size / entry.count)}`)
      .join(', ');
    console.log(
      `  ${name.padEnd(38)} ${String(entry.count).padStart(5)} × ${String(Math.round(entry.bytes / entry.count)).padStart(4)} B = ${entry.bytes.toLocaleString('en-US').padStart(9)} B   (${fields})`,
    );
  }
  for (const [type, sizes] of payloads)
    console.log(
      `  activity ${type}: ${sizes.count}, payload bytes per call: input ${Math.round(sizes.input / sizes.count)}, result ${Math.round(sizes.result / sizes.count)}`,
    );
}
