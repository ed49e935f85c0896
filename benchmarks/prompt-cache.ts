/**
 * What Anthropic's prompt caching saves a research run (issue 31): one 30-call run through
 * REACT_AGENT_MODEL_API=anthropic-messages against the scripted server playing Anthropic's cache
 * (test/fakes/prompt-cache.ts), with the request's cache breakpoints (ours) and without them
 * (what a compatibility layer sends), at Claude's prices: cache reads at 10 % of input, writes at
 * 125 %. Prints each run's input cost, the hit rate, and the ratio; exits non-zero when caching
 * saves less than 5×.
 *
 *   npm run benchmark:cache              (30 calls, ~4,400-character observations)
 *   npm run benchmark:cache -- 50 2000   (model calls, observation characters)
 */
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { join } from 'node:path';
import { createActivities, LocalDirectoryTranscriptStore, ToolRegistry } from '../activities';
import { createAnthropicMessagesModel } from '../activities/model/anthropic-messages-model';
import type { ResearchRunResult } from '../src/core/run-result';
import { callCostUsd, type ModelPrice } from '../src/domain/model-prices';
import { countAssistantMessages } from '../test/fakes/scripted-model-server';
import { tools as testTools } from '../test/fakes/test-tools';
import { startBenchmarkStack } from './benchmark-stack';

const MODEL_CALLS = Number(process.argv[2] ?? 30);
const OBSERVATION_CHARACTERS = Number(process.argv[3] ?? 4_400);
/** Claude Sonnet's prices per million tokens. */
const PRICE: ModelPrice = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 };
const MODEL = 'scripted-model';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startBenchmarkStack({
    name: 'benchmark-cache',
    promptCache: true,
    script: (request) => {
      const turn = countAssistantMessages(request.messages) + 1;
      return turn >= MODEL_CALLS
        ? { content: '<think>Enough.</think>\n<answer>BYD sold more.</answer>', completionTokens: 20 }
        : {
            content: `<think>Step ${turn}: I need more data.</think>\n<tool_call>\n{"name": "big_output", "arguments": {"characters": ${OBSERVATION_CHARACTERS}}}\n</tool_call>`,
            completionTokens: 40,
          };
    },
  });
  const { directory, model, client, workerConnection } = stack;
  try {
    /** One run with its own worker and task queue, the model's cache breakpoints on or off. */
    const run = async (promptCaching: boolean) => {
      const taskQueue = `benchmark-cache-${promptCaching ? 'on' : 'off'}`;
      const worker = await Worker.create({
        connection: workerConnection,
        taskQueue,
        workflowsPath: require.resolve('./benchmark-workflows'),
        activities: createActivities({
          chatModel: createAnthropicMessagesModel({ baseUrl: model.origin, apiKey: 'benchmark', promptCaching }),
          store: new LocalDirectoryTranscriptStore(join(directory, `transcripts-${taskQueue}`)),
          tools: new ToolRegistry(testTools),
          modelDefaults: { model: MODEL, temperature: 0.6, topP: 0.95, maxOutputTokens: 1000 },
          modelPrices: { [MODEL]: PRICE },
          modelActivity: { startToCloseSeconds: 60, heartbeatSeconds: 30, maxAttempts: 3 },
        }),
      });
      const started = Date.now();
      const result = await worker.runUntil(
        client.workflow.execute('researchAgent', {
          taskQueue,
          workflowId: `${taskQueue}-${Date.now()}`,
          args: [
            {
              question: 'Which company sold more cars in 2024, BYD or Tesla, and by how much?',
              limits: { maxModelCalls: MODEL_CALLS, maxContextTokens: 1_000_000 },
              loop: { stuckDetection: false },
            },
          ],
        }) as Promise<ResearchRunResult>,
      );
      const usage = result.usage;
      const cached = usage.cachedPromptTokens ?? 0;
      const written = usage.cacheWriteTokens ?? 0;
      const inputCost = callCostUsd(
        {
          promptTokens: usage.promptTokens,
          completionTokens: 0,
          cachedPromptTokens: cached,
          cacheWriteTokens: written,
        },
        PRICE,
      );
      return { result, cached, written, inputCost, seconds: (Date.now() - started) / 1000 };
    };
    const cached = await run(true);
    const uncached = await run(false);
    const dollars = (usd: number) => `$${usd.toFixed(4)}`;
    const line = (name: string, figures: Awaited<ReturnType<typeof run>>) =>
      `${name.padEnd(26)} ${String(figures.result.iterations).padStart(5)}  ${figures.result.usage.promptTokens.toLocaleString('en-US').padStart(13)}  ${figures.cached.toLocaleString('en-US').padStart(11)}  ${figures.written.toLocaleString('en-US').padStart(11)}  ${`${Math.round((100 * figures.cached) / figures.result.usage.promptTokens)}%`.padStart(5)}  ${dollars(figures.inputCost).padStart(10)}  ${dollars(figures.result.usage.costUsd ?? 0).padStart(10)}`;
    console.log(
      `Prompt caching over one ${cached.result.iterations}-call research run (Anthropic Messages API, scripted cache; input $${PRICE.input}, cache reads $${PRICE.cachedInput}, writes $${PRICE.cacheWrite}, output $${PRICE.output} per million tokens)`,
    );
    console.log('');
    console.log(
      'run                        calls  prompt tokens  cache reads  cache write  hit    input cost  total cost',
    );
    console.log(line('cache breakpoints (ours)', cached));
    console.log(line('no breakpoints', uncached));
    const ratio = uncached.inputCost / cached.inputCost;
    console.log('');
    console.log(
      `Input cost ${ratio.toFixed(1)}× less with caching (${dollars(uncached.inputCost - cached.inputCost)} saved; target ≥ 5×).`,
    );
    process.exitCode = ratio >= 5 && cached.result.termination === 'answer' ? 0 : 1;
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
