/*
 * Drives the research agent from your own TypeScript service with @temporalio/client and this
 * package's client library. Run from the project root (after `npm ci`, which compiles it):
 *
 *   node --import tsx samples/clients/typescript/research.ts run "Which company sold more cars in 2024?"
 *   node --import tsx samples/clients/typescript/research.ts start "QUESTION" [--id ID] [--max-calls N]
 *   node --import tsx samples/clients/typescript/research.ts progress|result|cancel ID
 *   node --import tsx samples/clients/typescript/research.ts inject ID "TEXT"
 *   node --import tsx samples/clients/typescript/research.ts finish ID [REASON]
 *
 * It prints JSON. TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default) and
 * REACT_AGENT_TASK_QUEUE (react-agent) say where the workers are.
 */
import { Client, Connection } from '@temporalio/client';
import {
  getResearch,
  InvalidResearchRequestError,
  startResearch,
  type ResearchRunRequest,
} from 'durable-react-agent/client';

async function main(argv: string[]): Promise<unknown> {
  const [command, first, second] = argv.filter(
    (argument, index) => !argument.startsWith('--') && !argv[index - 1]?.startsWith('--'),
  );
  const option = (name: string) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  // `return await` below: the connection closes in `finally`, so each answer must arrive first.
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    const taskQueue = process.env.REACT_AGENT_TASK_QUEUE ?? 'react-agent';
    switch (command) {
      case 'run':
      case 'start': {
        // --input takes a whole request as JSON (to try what the contract refuses).
        const request: ResearchRunRequest = option('input')
          ? (JSON.parse(option('input') as string) as ResearchRunRequest)
          : {
              question: first ?? '',
              ...(option('max-calls') ? { limits: { maxModelCalls: Number(option('max-calls')) } } : {}),
            };
        const id = option('id');
        const run = await startResearch(client, request, { taskQueue, ...(id ? { workflowId: id } : {}) });
        if (command === 'start') return { workflowId: run.workflowId };
        return { workflowId: run.workflowId, result: await run.result() };
      }
      case 'progress':
        return await getResearch(client, first as string).progress();
      case 'inject':
        return await getResearch(client, first as string).injectMessage(second as string);
      case 'finish':
        return await getResearch(client, first as string).finishNow(second);
      case 'result':
        return await getResearch(client, first as string).result();
      case 'cancel': {
        const run = getResearch(client, first as string);
        await run.cancel();
        return await run.result();
      }
      default:
        throw new Error(
          `unknown command ${JSON.stringify(command)}: run, start, progress, inject, finish, result or cancel`,
        );
    }
  } finally {
    await connection.close();
  }
}

main(process.argv.slice(2)).then(
  (output) => console.log(JSON.stringify(output, null, 2)),
  (error: unknown) => {
    // A request the contract refuses never reaches Temporal: its problems name the fields.
    if (error instanceof InvalidResearchRequestError) console.log(JSON.stringify({ refused: error.problems }, null, 2));
    else console.error(error);
    process.exitCode = 1;
  },
);
