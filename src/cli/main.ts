/**
 * The `react-agent` command. Each subcommand lives in commands/; this file only dispatches and
 * turns errors into one clear message and an exit code (2 for usage, 1 for anything else).
 */
import { ConfigurationError } from '../config';
import { registerBatchCommands } from './commands/batch-command';
import { scheduleCommand, scheduleHelp } from './commands/schedule-command';
import { cancelCommand, cancelHelp } from './commands/cancel-command';
import { evalCommand, evalHelp } from './commands/eval-command';
import { followCommand, followHelp } from './commands/follow-command';
import { gcCommand, gcHelp } from './commands/gc-command';
import { kbCommand, kbHelp } from './commands/kb-command';
import { listCommand, listHelp } from './commands/list-command';
import { resultCommand, resultHelp } from './commands/result-command';
import { runCommand, runHelp } from './commands/run-command';
import { serverCommand, serverHelp } from './commands/server-command';
import { startCommand, startHelp } from './commands/start-command';
import { statusCommand, statusHelp } from './commands/status-command';
import { approveCommand, approveHelp, finishCommand, finishHelp, injectCommand, injectHelp, limitsCommand, limitsHelp } from './commands/steering-commands';
import { exitWhenFlushed, ignoreOutputErrors, printText } from './standard-output';
import { UsageError } from './usage-error';

const commands: Record<string, { help: string; summary: string; run: (argumentsList: string[]) => Promise<number> }> = {
  run: { help: runHelp, summary: 'answer a question end to end, printing progress', run: runCommand },
  start: { help: startHelp, summary: 'start a run; print its id and Web UI link', run: startCommand },
  follow: { help: followHelp, summary: 'print a run\'s progress until it ends', run: followCommand },
  status: { help: statusHelp, summary: 'show a run\'s status and progress', run: statusCommand },
  result: { help: resultHelp, summary: 'print a run\'s result with its messages as JSON', run: resultCommand },
  cancel: { help: cancelHelp, summary: 'cancel a run cleanly', run: cancelCommand },
  inject: { help: injectHelp, summary: 'add a user message to a running run', run: injectCommand },
  finish: { help: finishHelp, summary: 'make a run give its best answer now', run: finishCommand },
  limits: { help: limitsHelp, summary: 'raise or lower a running run\'s budgets', run: limitsCommand },
  approve: { help: approveHelp, summary: 'approve or deny a tool call waiting for approval', run: approveCommand },
  list: { help: listHelp, summary: 'list recent runs', run: listCommand },
  kb: { help: kbHelp, summary: 'manage the local knowledge base the search tool uses', run: kbCommand },
  server: { help: serverHelp, summary: 'run the local Temporal dev server with the Web UI', run: serverCommand },
  gc: { help: gcHelp, summary: 'remove transcripts of runs closed longer ago than --older-than', run: gcCommand },
  eval: { help: evalHelp, summary: 'score a batch (exact match, F1, an LLM judge); eval compare A B', run: evalCommand },
};
registerBatchCommands(commands, { schedule: { help: scheduleHelp, summary: 'Temporal Schedules that start batches (create, list, describe, pause, trigger, backfill, ...)', run: scheduleCommand } });

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
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${overview}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    printText(command.help);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${error.help}`);
      return 2;
    }
    if (error instanceof ConfigurationError) {
      console.error(error.message);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    console.error(`react-agent ${name}: ${message}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) => {
    console.error(error);
    exitWhenFlushed(1);
  });
}
