/**
 * What the tracing interceptors cost the workflow thread, and whether a workflow's behaviour
 * depends on them (issue 34): every recorded history in test/fixtures/histories replayed `--repeat`
 * times (default 4) through four bundles of workflows/, three rounds alternating:
 *
 * - `traced`: the bundle of a worker that traces, with `@temporalio/interceptors-opentelemetry`'s
 *   workflow interceptors (src/config/workflow-interceptors.ts);
 * - `not sampled`: the same interceptors with their spans' sampling off
 *   (tracing-replay/spans-not-sampled.ts): spans created, neither recorded nor exported;
 * - `untraced`: the bundle of a worker that does not trace, with only the promise turns of those
 *   interceptors (workflows/tracing-turns-interceptor.ts; issue 34);
 * - `none`: no interceptors (which does not replay every history).
 *
 * Prints wall and CPU seconds of each round (replay is the workflow thread's work alone: no
 * server, no activities) and the histories each bundle fails to replay, with the first error.
 *
 * `npx tsx benchmarks/tracing-replay.ts [-- --repeat 4]`
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../src/config/workflow-interceptors';
import { describeLoad } from './fleet-helpers';

const repeatIndex = process.argv.indexOf('--repeat');
const REPEAT = repeatIndex === -1 ? 4 : Number(process.argv[repeatIndex + 1]);
const ROUNDS = 3;
const histories = join(__dirname, '..', 'test', 'fixtures', 'histories');

async function main(): Promise<void> {
  // Replays log every sink call and failed task (the failures are summed up below): keep the output to the figures.
  Runtime.install({
    logger: new DefaultLogger('ERROR', () => undefined),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
  console.log(`benchmark:tracing-replay — ${describeLoad()}`);
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-tracing-replay-'));
  try {
    const bundles: Record<string, string> = {};
    const variants: Record<string, string[]> = {
      traced: [...TRACING_WORKFLOW_INTERCEPTOR_MODULES],
      'not sampled': [
        join(__dirname, 'tracing-replay', 'spans-not-sampled.ts'),
        ...TRACING_WORKFLOW_INTERCEPTOR_MODULES,
      ],
      untraced: [...UNTRACED_WORKFLOW_INTERCEPTOR_MODULES],
      none: [],
    };
    for (const [name, workflowInterceptorModules] of Object.entries(variants)) {
      const { code } = await bundleWorkflowCode({
        workflowsPath: require.resolve('../workflows'),
        workflowInterceptorModules,
        logger: new DefaultLogger('ERROR'),
      });
      bundles[name] = join(directory, `${name.replace(/\W/g, '-')}.js`);
      writeFileSync(bundles[name] as string, code);
    }
    const recorded = readdirSync(histories)
      .filter((name) => name.endsWith('.json'))
      .map((name) => {
        const history = historyFromJSON(JSON.parse(readFileSync(join(histories, name), 'utf8')));
        const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? name;
        return { name, workflowId, history };
      });
    console.log(`${recorded.length} recorded histories, each replayed ${REPEAT} times a round`);
    const failures = new Map<string, Map<string, string>>();
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [name, codePath] of Object.entries(bundles)) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        for (let repeat = 0; repeat < REPEAT; repeat += 1) {
          const replays = Worker.runReplayHistories(
            { workflowBundle: { codePath }, replayName: `${name}-${round}-${repeat}` },
            recorded.map(({ workflowId, history }) => ({ workflowId, history })),
          );
          // One result per history, in their order (replayed one at a time): several share a workflow id (the limiter's).
          let index = 0;
          for await (const result of replays) {
            const failed = recorded[index]?.name ?? result.workflowId;
            index += 1;
            if (!result.error) continue;
            const byName = failures.get(name) ?? new Map<string, string>();
            byName.set(failed, result.error.message.slice(0, 200));
            failures.set(name, byName);
          }
        }
        const used = process.cpuUsage(cpu);
        console.log(
          `round ${round}, ${name.padEnd(11)}: ${((performance.now() - started) / 1000).toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU`,
        );
      }
    }
    for (const name of Object.keys(bundles)) {
      const failed = failures.get(name);
      console.log(
        failed
          ? `${name}: does not replay ${[...failed.keys()].join(', ')}\n  ${[...failed.values()][0]}`
          : `${name}: every history replays`,
      );
    }
    console.log(describeLoad());
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
