/**
 * The `react-agent` command. Each subcommand lives in commands/; this file only dispatches and
 * turns errors into one clear message and an exit code (2 for usage, 1 for anything else).
 *
 * A command's module is loaded only when that command runs (or prints its help): `--help` loads
 * none, `start` loads no vega, S3 client or tokenizer, so the CLI answers at once.
 */
import { ConfigurationError } from '../config/configuration-error';
import { configuredSecretRedactor } from '../config/configured-secrets';
import { exitWhenFlushed, ignoreOutputErrors, printText } from './standard-output';
import { UsageError } from './usage-error';

/** A loaded command: its help text and what it does. */
export interface Command {
  help: string;
  run: (argumentsList: string[]) => Promise<number>;
}

/** A command as the table knows it before loading anything: its one-line summary and its loader. */
interface LazyCommand {
  summary: string;
  load: () => Command;
}

/** The batch side of `follow`, `status`, `cancel` and `list` (commands/batch/batch-sides.ts), loaded only for these. */
const batchCommands = () => require('./commands/batch/batch-sides') as typeof import('./commands/batch/batch-sides');

function steering(name: 'inject' | 'finish' | 'limits' | 'approve'): () => Command {
  return () => {
    const module = require('./commands/steering-commands') as typeof import('./commands/steering-commands');
    return { help: module[`${name}Help`], run: module[`${name}Command`] };
  };
}

/** Every command, in the order of the overview. */
export const commands: Record<string, LazyCommand> = {
  run: {
    summary: 'answer a question end to end, printing progress',
    load: () => {
      const { runCommand, runHelp } = require('./commands/run-command') as typeof import('./commands/run-command');
      return { help: runHelp, run: runCommand };
    },
  },
  start: {
    summary: 'start a run; print its id and Web UI link',
    load: () => {
      const { startCommand, startHelp } =
        require('./commands/start-command') as typeof import('./commands/start-command');
      return { help: startHelp, run: startCommand };
    },
  },
  follow: {
    summary: "print a run or batch's progress until it ends",
    // A run id: the run's view; a batch id: the batch's (batchSides.follow).
    load: () => {
      const { followCommand, followHelp } =
        require('./commands/follow-command') as typeof import('./commands/follow-command');
      const { takingBatchIds, batchSides } = batchCommands();
      return takingBatchIds({ help: followHelp, run: followCommand }, batchSides.follow);
    },
  },
  status: {
    summary: "show a run or batch's status and progress",
    // A run id: the run's view; a batch id: the batch's (batchSides.status).
    load: () => {
      const { statusCommand, statusHelp } =
        require('./commands/status-command') as typeof import('./commands/status-command');
      const { takingBatchIds, batchSides } = batchCommands();
      return takingBatchIds({ help: statusHelp, run: statusCommand }, batchSides.status);
    },
  },
  result: {
    summary: "print a run's result with its messages as JSON",
    load: () => {
      const { resultCommand, resultHelp } =
        require('./commands/result-command') as typeof import('./commands/result-command');
      return { help: resultHelp, run: resultCommand };
    },
  },
  cancel: {
    summary: 'cancel a run or batch cleanly',
    // A run id: the run's view; a batch id: the batch's (batchSides.cancel).
    load: () => {
      const { cancelCommand, cancelHelp } =
        require('./commands/cancel-command') as typeof import('./commands/cancel-command');
      const { takingBatchIds, batchSides } = batchCommands();
      return takingBatchIds({ help: cancelHelp, run: cancelCommand }, batchSides.cancel);
    },
  },
  inject: { summary: 'add a user message to a running run', load: steering('inject') },
  finish: { summary: 'make a run give its best answer now', load: steering('finish') },
  limits: { summary: "raise or lower a running run's budgets", load: steering('limits') },
  approve: { summary: 'approve or deny a tool call waiting for approval', load: steering('approve') },
  list: {
    summary: 'list recent runs (--batches: batches)',
    // --batches: the batches (listingBatches).
    load: () => {
      const { listCommand, listHelp } = require('./commands/list-command') as typeof import('./commands/list-command');
      return batchCommands().listingBatches({ help: listHelp, run: listCommand });
    },
  },
  tools: {
    summary: 'list the tools a worker would offer (built-ins, modules, MCP servers)',
    load: () => {
      const { toolsCommand, toolsHelp } =
        require('./commands/tools-command') as typeof import('./commands/tools-command');
      return { help: toolsHelp, run: toolsCommand };
    },
  },
  kb: {
    summary: 'manage the local knowledge base the search tool uses',
    load: () => {
      const { kbCommand, kbHelp } = require('./commands/kb-command') as typeof import('./commands/kb-command');
      return { help: kbHelp, run: kbCommand };
    },
  },
  server: {
    summary: 'run the local Temporal dev server with the Web UI',
    load: () => {
      const { serverCommand, serverHelp } =
        require('./commands/server-command') as typeof import('./commands/server-command');
      return { help: serverHelp, run: serverCommand };
    },
  },
  worker: {
    summary: 'run a worker until Ctrl-C (the same as npm run worker)',
    load: () => {
      const { workerCommand, workerHelp } =
        require('./commands/worker-command') as typeof import('./commands/worker-command');
      return { help: workerHelp, run: workerCommand };
    },
  },
  stack: {
    summary: 'the production stack here: PostgreSQL, Temporal services, S3, workers (up|down|status|cut|restore)',
    load: () => {
      const { stackCommand, stackHelp } =
        require('./commands/stack-command') as typeof import('./commands/stack-command');
      return { help: stackHelp, run: stackCommand };
    },
  },
  gc: {
    summary: 'remove transcripts of runs closed longer ago than --older-than',
    load: () => {
      const { gcCommand, gcHelp } = require('./commands/gc-command') as typeof import('./commands/gc-command');
      return { help: gcHelp, run: gcCommand };
    },
  },
  eval: {
    summary: 'score a batch (exact match, F1, an LLM judge); eval compare A B',
    load: () => {
      const { evalCommand, evalHelp } = require('./commands/eval-command') as typeof import('./commands/eval-command');
      return { help: evalHelp, run: evalCommand };
    },
  },
  batch: {
    summary: 'run a file of questions as a durable batch (rollouts, resume)',
    load: () => {
      const { batchCommand, batchHelp } =
        require('./commands/batch/batch-command') as typeof import('./commands/batch/batch-command');
      return { help: batchHelp, run: batchCommand };
    },
  },
  schedule: {
    summary: 'Temporal Schedules that start batches (create, list, describe, pause, trigger, backfill, ...)',
    load: () => {
      const { scheduleCommand, scheduleHelp } =
        require('./commands/schedule/schedule-command') as typeof import('./commands/schedule/schedule-command');
      return { help: scheduleHelp, run: scheduleCommand };
    },
  },
};

const overview = `Usage: react-agent <command> [options]   (react-agent <command> --help for details)

A durable ReAct research agent: every run is a Temporal workflow.

Commands:
${Object.entries(commands)
  .map(([name, command]) => `  ${name.padEnd(8)} ${command.summary}`)
  .join('\n')}

Model: OPENAI_BASE_URL, OPENAI_API_KEY, REACT_AGENT_MODEL. Temporal: TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY (default: a local dev server on localhost:7233).`;

export async function main(argv: string[]): Promise<number> {
  ignoreOutputErrors();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    printText(overview);
    return name ? 0 : 2;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    console.error(`Unknown command "${name}".\n\n${overview}`);
    return 2;
  }
  const command = entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    printText(command.help);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    // An error may quote what a server answered or a URL it was given: never a configured secret.
    const redactor = configuredSecretRedactor(process.env);
    if (error instanceof UsageError) {
      console.error(redactor.redact(`${error.message}\n\n${error.help}`));
      return 2;
    }
    if (error instanceof ConfigurationError) {
      console.error(redactor.redact(error.message));
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    console.error(redactor.redact(`react-agent ${name}: ${message}`));
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) => {
    console.error(configuredSecretRedactor(process.env).redactError(error));
    exitWhenFlushed(1);
  });
}
