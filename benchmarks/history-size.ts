/**
 * History size of a 100-call research run whose context grows to ~110K tokens: our design
 * (transcript by reference) beside a naive baseline that passes the whole transcript to every
 * model call, measured in the same run against the same dev server, scripted model and tool.
 *
 *   npm run benchmark:history            (100 calls, ~4,400-character observations)
 *   npm run benchmark:history -- 50 4400 (model calls, observation characters)
 */
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createOpenAIChatModel } from '../activities/model/openai-chat-model';
import { createActivities, LocalDirectoryTranscriptStore, ToolRegistry } from '../activities';
import type { ResearchRunResult } from '../src/core/run-result';
import { bigOutput, tools as testTools } from '../test/fakes/test-tools';
import { countAssistantMessages } from '../test/fakes/scripted-model-server';
import { createNaiveActivities } from './naive-baseline/activities';
import { startBenchmarkStack } from './benchmark-stack';
import { describeLoad } from './fleet-helpers';
import { TimedTokenCounter } from './timed-token-counter';
import { createTiktokenCounter } from '../activities/token-counter';

const MODEL_CALLS = Number(process.argv[2] ?? 100);
const OBSERVATION_CHARACTERS = Number(process.argv[3] ?? 4_400);
const MIB = 1024 * 1024;

async function historyFigures(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const bytes = temporal.api.history.v1.History.encode(history).finish().length;
  return {
    bytes,
    events: history.events?.length ?? 0,
    toolList: toolListFigures(history),
    modelActivityMs: meanActivityMs(history, 'callModel'),
  };
}

function milliseconds(time: temporal.api.history.v1.IHistoryEvent['eventTime']): number {
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** Mean time from started to completed of an activity type's attempts that completed (the model's reply included), from history. */
function meanActivityMs(history: temporal.api.history.v1.IHistory, activityType: string): number {
  const events = history.events ?? [];
  const scheduled = new Set(
    events
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === activityType)
      .map((event) => String(event.eventId)),
  );
  const startedAt = new Map(
    events
      .filter((event) => scheduled.has(String(event.activityTaskStartedEventAttributes?.scheduledEventId ?? '-')))
      .map((event) => [String(event.eventId), milliseconds(event.eventTime)]),
  );
  const durations = events.flatMap((event) => {
    const started = startedAt.get(String(event.activityTaskCompletedEventAttributes?.startedEventId ?? '-'));
    return started === undefined ? [] : [milliseconds(event.eventTime) - started];
  });
  return durations.length ? durations.reduce((sum, duration) => sum + duration, 0) / durations.length : 0;
}

/**
 * What the run's tool list took of history: the bytes of `startConversation`'s result as stored
 * (the payload; in its local activity marker since issue 34), and of its `tools` field (JSON) — the whole specs before issue 18's
 * `tool-specs-by-reference`, names and scheduling settings after (the specs behind `toolSpecs`).
 */
function toolListFigures(history: temporal.api.history.v1.IHistory) {
  const events = history.events ?? [];
  const scheduled = events.find(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'startConversation',
  );
  const completed = events.find(
    (event) =>
      String(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(scheduled?.eventId ?? '-'),
  );
  // Since issue 34's light bookkeeping a local activity: its result is in its marker.
  const local = events.find((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    return data ? Buffer.from(data).toString('utf8').includes('"activity_type":"startConversation"') : false;
  });
  const payload =
    completed?.activityTaskCompletedEventAttributes?.result?.payloads?.[0] ??
    local?.markerRecordedEventAttributes?.details?.result?.payloads?.[0];
  const result = payload?.data
    ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as { tools?: unknown[]; toolSpecs?: string })
    : {};
  return {
    resultBytes: payload ? temporal.api.common.v1.Payload.encode(payload).finish().length : 0,
    toolsFieldBytes: Buffer.byteLength(JSON.stringify(result.tools ?? [])),
    tools: result.tools?.length ?? 0,
    byReference: result.toolSpecs !== undefined,
  };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // Every turn but the last calls the tool; the last answers. Usage is the server's estimate (characters / 4).
  // The naive history's pages exceed gRPC's default 4 MiB message limit.
  const stack = await startBenchmarkStack({
    name: 'benchmark',
    maxReceiveMessageBytes: 256 * MIB,
    script: (request) => {
      const turn = countAssistantMessages(request.messages) + 1;
      return turn >= MODEL_CALLS
        ? { content: '<think>Enough.</think>\n<answer>BYD sold more.</answer>' }
        : {
            content: `<think>Step ${turn}: I need more data.</think>\n<tool_call>\n{"name": "big_output", "arguments": {"characters": ${OBSERVATION_CHARACTERS}}}\n</tool_call>`,
          };
    },
  });
  const { directory, model, client, workerConnection } = stack;
  const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: 'benchmark', maxRetries: 0 });
  // The test tools (six, big_output the one called), so the tool list is more than one entry.
  const tools = new ToolRegistry(testTools);
  // Every count the activities make is timed: tokens counted per model call, amortised over the run.
  const tokenCounter = new TimedTokenCounter(createTiktokenCounter({ rememberPieces: false }));
  const activities = {
    ...createActivities({
      chatModel: createOpenAIChatModel({ baseUrl: model.baseUrl, apiKey: 'benchmark' }),
      store: new LocalDirectoryTranscriptStore(join(directory, 'transcripts')),
      tools,
      tokenCounter,
      modelDefaults: { model: 'scripted-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1000 },
      modelActivity: { startToCloseSeconds: 60, heartbeatSeconds: 30, maxAttempts: 3 },
    }),
    ...createNaiveActivities(openai, 'scripted-model', bigOutput),
  };
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue: 'benchmark',
    workflowsPath: require.resolve('./benchmark-workflows'),
    activities,
  });

  try {
    const figures = await worker.runUntil(async () => {
      const question = 'Which company sold more cars in 2024, BYD or Tesla, and by how much?';
      // tiktoken's encoding loads, and the piece pattern compiles, on the first count (once per worker process): not counted as counting.
      tokenCounter.count('warm up');
      createTiktokenCounter().count('Warm up: the piece pattern, 123.');
      /**
       * Our run, its counting timed with a fresh counter: counts carried forward (issue 21) or
       * recounted every call (before), tiktoken's pieces remembered or every text encoded.
       */
      const runOurs = async (carryCounts: boolean, rememberPieces: boolean) => {
        tokenCounter.measure(createTiktokenCounter({ rememberPieces }), carryCounts);
        const started = Date.now();
        const workflowId = `benchmark-durable-${carryCounts ? 'carried' : 'recounted'}-${rememberPieces ? 'pieces' : 'plain'}-${Date.now()}`;
        const result = (await client.workflow.execute('researchAgent', {
          taskQueue: 'benchmark',
          workflowId,
          // The scripted model repeats one call on purpose, so stuck detection is off; the budget is above the ~110K the context reaches.
          args: [
            {
              question,
              limits: { maxModelCalls: MODEL_CALLS, maxContextTokens: 1_000_000 },
              loop: { stuckDetection: false },
            },
          ],
        })) as ResearchRunResult;
        const seconds = (Date.now() - started) / 1000;
        return {
          result,
          seconds,
          counting: tokenCounter.time,
          byActivity: tokenCounter.byActivity,
          load: describeLoad(),
          history: await historyFigures(client, workflowId),
        };
      };
      const carried = await runOurs(true, true);
      const carriedPlain = await runOurs(true, false);
      const recounted = await runOurs(false, false);

      const started = Date.now();
      const naiveId = `benchmark-naive-${Date.now()}`;
      await client.workflow.execute('naiveResearchAgent', {
        taskQueue: 'benchmark',
        workflowId: naiveId,
        args: [question, MODEL_CALLS],
      });
      const naiveSeconds = (Date.now() - started) / 1000;
      const naiveHistory = await historyFigures(client, naiveId);
      return {
        ours: carried.result,
        oursSeconds: carried.seconds,
        oursHistory: carried.history,
        carried,
        carriedPlain,
        recounted,
        naiveSeconds,
        naiveHistory,
      };
    });

    const { ours, oursHistory, naiveHistory } = figures;
    console.log(
      `History size of one ${ours.iterations}-call run, context grown to ${ours.contextTokens.toLocaleString('en-US')} tokens (termination: ${ours.termination})`,
    );
    console.log('');
    console.log('design                          history bytes      MiB   events   wall s');
    console.log(
      `transcript by reference (ours)  ${String(oursHistory.bytes).padStart(13)}  ${(oursHistory.bytes / MIB).toFixed(2).padStart(7)}  ${String(oursHistory.events).padStart(7)}  ${figures.oursSeconds.toFixed(1).padStart(7)}`,
    );
    console.log(
      `naive: whole transcript/call    ${String(naiveHistory.bytes).padStart(13)}  ${(naiveHistory.bytes / MIB).toFixed(2).padStart(7)}  ${String(naiveHistory.events).padStart(7)}  ${figures.naiveSeconds.toFixed(1).padStart(7)}`,
    );
    console.log('');
    const list = oursHistory.toolList;
    console.log(
      `tool list (${list.tools} tools) in ours: startConversation's result ${list.resultBytes} bytes, its tools field ${list.toolsFieldBytes} bytes` +
        (list.byReference ? ' (names and scheduling; the specs stored by reference)' : ' (the whole specs)'),
    );
    console.log(
      `ratio naive/ours: ${(naiveHistory.bytes / oursHistory.bytes).toFixed(1)}x bytes; per iteration ours adds ${(oursHistory.bytes / ours.iterations / 1024).toFixed(1)} KiB`,
    );
    console.log('');
    console.log(`token counting (tiktoken o200k_base) in ours, per model call amortised over the run:`);
    console.log(
      'counts                                    ms/call  CPU ms/call   texts counted   counting ms   callModel ms   load',
    );
    for (const [label, run] of [
      ['carried, pieces remembered (ours)', figures.carried],
      ['carried, every text encoded', figures.carriedPlain],
      ['recounted every call (before)', figures.recounted],
    ] as const) {
      console.log(
        `${label.padEnd(40)}  ${(run.counting.milliseconds / run.result.iterations).toFixed(2).padStart(7)}  ${(run.counting.cpuMilliseconds / run.result.iterations).toFixed(2).padStart(11)}  ${run.counting.counts.toLocaleString('en-US').padStart(14)}  ` +
          `${run.counting.milliseconds.toFixed(0).padStart(12)}  ${run.history.modelActivityMs.toFixed(1).padStart(13)}   ${run.load}`,
      );
      for (const [activity, time] of [...run.byActivity].sort(
        ([, left], [, right]) => right.milliseconds - left.milliseconds,
      )) {
        console.log(
          `  in ${activity.padEnd(36)}  ${(time.milliseconds / run.result.iterations).toFixed(2).padStart(7)}  ${(time.cpuMilliseconds / run.result.iterations).toFixed(2).padStart(11)}  ${time.counts.toLocaleString('en-US').padStart(14)}  ${time.milliseconds.toFixed(0).padStart(12)}`,
        );
      }
    }
    const countingPerCall = figures.carried.counting.milliseconds / figures.carried.result.iterations;
    const inModelCalls =
      (figures.carried.byActivity.get('callModel')?.milliseconds ?? 0) / figures.carried.result.iterations;
    const cpuPerCall = figures.carried.counting.cpuMilliseconds / figures.carried.result.iterations;
    console.log(
      `(ms: wall time counting; CPU ms: the process's CPU time meanwhile, less inflated by load; callModel ms: mean started → completed of the model activity, the scripted model's reply included; the recounting run's history ${figures.recounted.history.bytes} bytes, ${figures.recounted.history.events} events)`,
    );
    console.log(
      `token counting target (<= 2 ms per model call amortised, counts carried forward): ${countingPerCall <= 2 ? 'met' : 'NOT MET'} in all activities (${countingPerCall.toFixed(2)} ms), ` +
        `${inModelCalls <= 2 ? 'met' : 'NOT MET'} in the model activity (${inModelCalls.toFixed(2)} ms); in CPU time ${cpuPerCall <= 2 ? 'met' : 'NOT MET'} in all (${cpuPerCall.toFixed(2)} ms)`,
    );
    console.log(describeLoad());
    const withinTarget =
      ours.iterations === MODEL_CALLS &&
      ours.termination === 'answer' &&
      oursHistory.bytes < MIB &&
      oursHistory.events < 2_000;
    console.log(
      `target (all ${MODEL_CALLS} calls made, ours < 1 MiB and < 2,000 events): ${withinTarget ? 'met' : 'NOT MET'}`,
    );
    process.exitCode = withinTarget ? 0 : 1;
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
