import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  eventsOverFloor,
  formatBytes,
  formatPerLatency,
  formatRange,
  historyEventFloor,
  historyRatios,
  markdownTable,
  median,
  oursLowest,
  rowCells,
  rowFigures,
  tableHeadings,
  targetShortfalls,
  type LatencyMeasurement,
  type SystemMeasurement,
} from '../../benchmarks/peers/peer-table';

const history = (events: number, bytes: number) => ({ events, bytes, activities: 19, workflowTasks: 20 });

function latency(latencyMs: number, wallMs: number[], bareMs: number[], cpu: number): LatencyMeasurement {
  return {
    latencyMs,
    wallMs,
    bareMs,
    workerCpuSeconds: cpu,
    serverCpuSeconds: cpu * 2,
    histories: wallMs.map(() => history(119, 42_000)),
  };
}

describe('the peers table of benchmark:peers', () => {
  test('median of odd and even counts, NaN for none', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  test('per-step overhead is (median run − median bare loop) / calls; CPU per call over runs × calls', () => {
    const measurement: SystemMeasurement = {
      system: 'peer',
      calls: 10,
      latencies: [
        // Median run 2,000 ms, median bare 1,000 ms: 100 ms a step. 3 runs × 10 calls on 0.81 s: 27 ms a call.
        latency(0, [2_000, 1_900, 2_500], [1_000, 990, 1_200], 0.81),
        latency(500, [6_100, 6_000, 6_200], [5_500, 5_500, 5_500], 0.78),
      ],
    };
    const figures = rowFigures(measurement);
    assert.deepEqual(figures.overheadPerStepMs, [100, 60]);
    assert.deepEqual(
      figures.workerCpuPerCallMs.map((ms) => Math.round(ms)),
      [27, 26],
    );
    assert.deepEqual(
      figures.serverCpuPerCallMs.map((ms) => Math.round(ms)),
      [54, 52],
    );
    assert.equal(figures.historyEvents, 119);
    assert.equal(figures.historyBytes, 42_000);
    assert.deepEqual(rowCells('peer', figures), [
      'peer',
      '100 / 60 ms',
      '26–27 ms',
      '52–54 ms',
      '119 / 42 KB',
      '19 / 20',
    ]);
  });

  test('ranges collapse when they round alike; bytes switch to MB at 1,000 KB; missing figures are dashes', () => {
    assert.equal(formatRange([26.2, 25.8]), '26 ms');
    assert.equal(formatRange([Number.NaN]), '—');
    assert.equal(formatPerLatency([95.4, Number.NaN]), '95 / — ms');
    assert.equal(formatBytes(37_400), '37 KB');
    assert.equal(formatBytes(14_400_000), '14.4 MB');
  });

  test('a Markdown table with a heading per latency', () => {
    const table = markdownTable(tableHeadings([0, 500]), [['a', '1 / 2 ms', '3 ms', '4 ms', '5 / 6 KB', '7 / 8']]);
    assert.equal(
      table.split('\n')[0],
      '|  | per-step overhead, 0 / 500 ms model | worker CPU per call | server CPU per call | history events / bytes per run | activities / workflow tasks per run |',
    );
    assert.equal(table.split('\n').length, 3);
  });

  test('ours is lowest in a column only when below every peer at every latency', () => {
    const figures = (overhead: number[], cpu: number[], events: number) => ({
      overheadPerStepMs: overhead,
      workerCpuPerCallMs: cpu,
      serverCpuPerCallMs: cpu,
      historyEvents: events,
      historyBytes: events * 300,
      activities: 19,
      workflowTasks: 20,
    });
    const verdict = oursLowest(
      [
        { system: 'peer a', figures: figures([95, 56], [27, 26], 119) },
        { system: 'peer b', figures: figures([100, 70], [40, 39], 119) },
        { system: 'ours', figures: figures([90, 60], [20, 20], 100) },
      ],
      'ours',
    );
    assert.deepEqual(verdict, {
      overhead: false,
      'worker CPU': true,
      'server CPU': true,
      'history events': true,
      'history bytes': true,
    });
    assert.equal(oursLowest([{ system: 'ours', figures: figures([1], [1], 1) }], 'ours'), undefined);
    assert.deepEqual(
      historyRatios(
        [
          { system: 'peer a', figures: figures([95], [27], 1_000) },
          { system: 'ours', figures: figures([90], [20], 100) },
        ],
        'ours',
      ),
      ['peer a: 10.0×'],
    );
  });

  test("issue 34's target: lowest in every figure, and from 100 calls every peer's history 10× ours", () => {
    const figures = (overhead: number, events: number, bytes: number) => ({
      overheadPerStepMs: [overhead, overhead],
      workerCpuPerCallMs: [overhead / 4],
      serverCpuPerCallMs: [overhead / 3],
      historyEvents: events,
      historyBytes: bytes,
      activities: 19,
      workflowTasks: 20,
    });
    const rows = [
      { system: 'peer', figures: figures(100, 1_199, 2_100_000) },
      { system: 'ours', figures: figures(80, 1_000, 343_000) },
    ];
    assert.deepEqual(targetShortfalls(rows, 'ours', 10), []);
    assert.deepEqual(targetShortfalls(rows, 'ours', 100), ["peer's history 6.1× ours, not 10×"]);
    const slower = [rows[0]!, { system: 'ours', figures: figures(120, 1_241, 200_000) }];
    assert.deepEqual(targetShortfalls(slower, 'ours', 100), [
      'overhead not lowest',
      'worker CPU not lowest',
      'server CPU not lowest',
      'history events not lowest',
    ]);
  });

  test('the floor of a history: started and closed, three events an activity and a workflow task; each row over it', () => {
    assert.equal(historyEventFloor(19, 20), 119);
    assert.equal(historyEventFloor(199, 200), 1_199);
    const figures = (historyEvents: number) => ({
      overheadPerStepMs: [100],
      workerCpuPerCallMs: [25],
      serverCpuPerCallMs: [35],
      historyEvents,
      historyBytes: 50_000,
      activities: 19,
      workflowTasks: 20,
    });
    assert.deepEqual(
      eventsOverFloor([
        { system: 'peer', figures: figures(119) },
        { system: 'ours', figures: figures(125) },
      ]),
      ['peer: 119 = 119 + 0', 'ours: 125 = 119 + 6'],
    );
  });
});
