import { parseArgs } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { ConfigurationError, loadModelConfig, loadTemporalConnection, loadWorkerConfig } from '../../config';
import { openCliContext } from '../cli-context';
import type { DevServer } from '../dev-server';
import { describeResult, followRun } from '../follow-run';
import { ChildWorker, ensureLocalServer, hasLiveWorker } from '../local-stack';
import { materialiseResult } from '../materialise-result';
import { checkModelEndpoint } from '../model-preflight';
import { runInputFrom, runOptionSpecs, runOptionsHelp, startRun } from '../start-run';
import { webUiLink } from '../temporal-client';

export const runHelp = `Usage: react-agent run "QUESTION" [options]

Answers a research question end to end and prints progress as it goes, then the answer.
With the default Temporal address (localhost:7233) and nothing listening there, it starts the
local dev server; with no worker polling, it starts one; it stops what it started when done.
Ctrl-C cancels the run (it still ends cleanly, with every tool call answered).
${runOptionsHelp}
  --output FILE        also write the full result (with messages) as JSON to FILE`;

export async function runCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argumentsList, allowPositionals: true, options: { ...runOptionSpecs, output: { type: 'string' } } });
  const input = runInputFrom(positionals.join(' ').trim() || undefined, values, runHelp);
  const log = (line: string) => console.error(line);

  const modelConfig = loadModelConfig();
  const unreachable = await checkModelEndpoint(modelConfig);
  if (unreachable) throw new ConfigurationError('OPENAI_BASE_URL', unreachable);

  const temporal = loadTemporalConnection();
  const workerConfig = loadWorkerConfig();
  let server: DevServer | undefined;
  let worker: ChildWorker | undefined;
  const stopStarted = async () => {
    if (worker) {
      log('Stopping the worker this command started ...');
      await worker.stop();
    }
    if (server) {
      log('Stopping the dev server this command started ...');
      await server.stop();
    }
  };
  try {
    server = await ensureLocalServer(temporal, workerConfig, log);
    const context = await openCliContext();
    try {
      if (!(await hasLiveWorker(context.client, temporal.namespace, workerConfig.taskQueue))) {
        worker = await ChildWorker.start(context.client, temporal, workerConfig, log);
      }
      const handle = await startRun(context, input, values.id);
      const link = webUiLink(temporal, handle.workflowId);
      log(`Run ${handle.workflowId} started${link ? `: ${link}` : ''}`);
      let interrupted = 0;
      const onInterrupt = () => {
        interrupted += 1;
        if (interrupted === 1) {
          log('Cancelling the run (Ctrl-C again to stop waiting) ...');
          handle.cancel().catch((error: Error) => log(`Could not cancel: ${error.message}`));
        } else {
          process.exit(130);
        }
      };
      process.on('SIGINT', onInterrupt);
      try {
        const result = await followRun(context.client, handle.workflowId, log);
        if (values.output) {
          const materialised = await materialiseResult(context.store, result);
          await writeFile(values.output, `${JSON.stringify(materialised, null, 2)}\n`);
          log(`Wrote ${values.output}.`);
        }
        console.log(describeResult(result));
        return result.termination === 'error' ? 1 : 0;
      } finally {
        process.off('SIGINT', onInterrupt);
      }
    } finally {
      await context.close();
    }
  } finally {
    await stopStarted();
  }
}
