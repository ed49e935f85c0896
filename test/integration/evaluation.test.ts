import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { BatchSummary } from '../../src/core/batch-contract';
import { formatUsd } from '../../src/core/cost-figures';
import type { EvaluationOutcome } from '../../src/core/evaluation/evaluation-contract';
import type { EvaluationReport } from '../../src/core/evaluation/evaluation-report';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { answerReply, pairOf } from './support/batch-helpers';
import { CliProcess } from './support/cli-process';

/*
 * `react-agent eval` through the real CLI, worker and dev server, the judge answered by the
 * scripted model server (the real openai client talks to it). Judge replies are chosen by the
 * question in the judge prompt; a reply after the reminder is told apart by the third message.
 */
let environment: AgentEnvironment;

function judgeReply(request: ScriptedRequest): ScriptedReply {
  const pair = pairOf(request);
  if (pair) {
    // A batch's research run: rollout 1 answers right, rollout 2 wrong.
    const question = String(request.messages[1]?.content ?? '');
    return answerReply(pair.rollout === 1 ? (question.includes('France') ? 'Paris' : '4') : 'no idea');
  }
  const prompt = String(request.messages[0]?.content ?? '');
  const reminded = request.messages.length >= 3;
  if (prompt.includes('[correct_answer]')) {
    // browsecomp: a JSON verdict, correct when the response names the reference.
    const response = /\[response\]: (.*)/.exec(prompt)?.[1] ?? '';
    const reference = /\[correct_answer\]: (.*)/.exec(prompt)?.[1] ?? '';
    const correct = response.toLowerCase().includes(reference.toLowerCase());
    return {
      content: `\`\`\`json\n${JSON.stringify({ extracted_final_answer: response, reasoning: 'compared', correct: correct ? 'yes' : 'no', confidence: '90%' })}\n\`\`\``,
    };
  }
  if (prompt.includes('clean question')) return { content: 'Correct' };
  if (prompt.includes('decorated question')) return { content: 'Verdict: **Incorrect.**' };
  if (prompt.includes('answer-prefixed question')) return { content: 'Answer: Incorrect' };
  if (prompt.includes('reminded question'))
    return { content: reminded ? 'Correct' : 'The prediction looks right to me.' };
  if (prompt.includes('unparseable question'))
    return { content: reminded ? 'I still cannot decide.' : 'Hmm, hard to say.' };
  return { status: 400, errorMessage: 'unexpected judge prompt' };
}

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: judgeReply });
  // The research runs' model has a price, so batches have a cost (issue 19); the judge's calls are not priced.
  await environment.startWorker({
    REACT_AGENT_MODEL_PRICES: JSON.stringify({ 'scripted-model': { input: 1, output: 5 } }),
  });
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

async function cli(
  argumentsList: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return CliProcess.complete(argumentsList, {
    environment: { ...environment.environment, ...extra },
    timeoutMs: 240_000,
  });
}

function ourLine(question: string, answer: string, prediction: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    question,
    answer,
    messages: [
      { role: 'system', content: 'system' },
      { role: 'user', content: question },
      { role: 'assistant', content: '<tool_call>\n{"name": "lookup", "arguments": {"query": "x"}}\n</tool_call>' },
      { role: 'user', content: '<tool_response>\nfound\n</tool_response>' },
      { role: 'assistant', content: `<answer>${prediction}</answer>` },
    ],
    prediction,
    termination: 'answer',
    runId: `batch-1/q0-r1`,
    usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 },
    durationMs: 1500,
    ...extra,
  });
}

function batchDirectory(name: string, rollouts: string[][]): string {
  const directory = join(environment.directory, name);
  mkdirSync(directory, { recursive: true });
  rollouts.forEach((lines, index) => writeFileSync(join(directory, `iter${index + 1}.jsonl`), `${lines.join('\n')}\n`));
  return directory;
}

function report(directory: string): EvaluationReport {
  return JSON.parse(readFileSync(join(directory, 'report.json'), 'utf8')) as EvaluationReport;
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as { port: number };
  await new Promise((resolveClose) => server.close(resolveClose));
  return port;
}

const judged = () => environment.model.requests.filter((request) => !request.workflowId).length;

test('a gaia judge run: clean, decorated and unparseable verdicts; a second run of the same evaluation makes no judge call', async () => {
  const directory = batchDirectory('judged', [
    [
      ourLine('The clean question?', 'Paris', 'Paris'),
      ourLine('The decorated question?', 'Paris', 'Lyon'),
      ourLine('The answer-prefixed question?', 'Paris', 'Rome'),
      ourLine('The reminded question?', '4', 'four'),
      ourLine('The unparseable question?', 'blue', 'green'),
    ],
  ]);
  const before = judged();
  const first = await cli(['eval', directory, '--judge', 'gaia', '--batch-id', 'batch-1']);
  assert.equal(first.code, 0, first.stderr);
  // 1 + 1 + 1 + 2 (reminder) + 2 (reminder, still unparseable).
  assert.equal(judged() - before, 7);
  const output = join(directory, 'evaluation');
  const firstReport = report(output);
  assert.equal(firstReport.method, 'judge');
  assert.equal(firstReport.judge?.name, 'gaia');
  assert.equal(firstReport.judge?.model, 'scripted-model');
  assert.equal(firstReport.source.batchId, 'batch-1');
  assert.deepEqual(
    firstReport.questions.map((row) => [row.question, row.rollouts[0]?.isCorrect, row.rollouts[0]?.unparsed === true]),
    [
      ['The clean question?', true, false],
      ['The decorated question?', false, false],
      ['The answer-prefixed question?', false, false],
      ['The reminded question?', true, false],
      ['The unparseable question?', false, true],
    ],
  );
  assert.deepEqual(
    firstReport.unparsedVerdicts.map((entry) => entry.question),
    ['The unparseable question?'],
  );
  expect(firstReport.metrics.meanPassAt1).toBeCloseTo(2 / 5, 10);
  assert.deepEqual(firstReport.judgeCalls, { made: 7, stored: 0 });
  assert.deepEqual(firstReport.statistics.all.toolCallsPerQuestion, { lookup: 1 });
  // The judge prompt carried the question, reference and prediction.
  const cleanPrompt = environment.model.requests.find((request) =>
    String(request.messages[0]?.content).includes('The clean question?'),
  );
  assert.match(String(cleanPrompt?.messages[0]?.content), /Reference answer: Paris\nPredicted answer: Paris/);
  assert.match(first.stdout, /mean_pass_at_1\s+40\.00% \(Avg\. Pass@1\)/);
  assert.match(first.stdout, /unparsed verdicts \(counted as not correct\): 1/);
  assert.match(first.stdout, new RegExp(`Report: ${join(output, 'report.html')}`));
  assert.ok(existsSync(join(output, 'report.html')));
  const scored = readFileSync(join(output, 'scored', 'iter1.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    scored.map((line) => [line.is_correct, line.em]),
    [
      [true, 1],
      [false, 0],
      [false, 0],
      [true, 0],
      [false, 0],
    ],
  );
  assert.equal(scored[0]?.judgement, 'Correct');
  assert.ok(Array.isArray(scored[0]?.messages), 'the scored line keeps the original line');

  const second = await cli(['eval', directory, '--judge', 'gaia', '--batch-id', 'batch-1']);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(judged() - before, 7, 'no judge call the second time');
  const secondReport = report(output);
  assert.deepEqual(secondReport.judgeCalls, { made: 0, stored: 5 });
  assert.deepEqual(secondReport.metrics, firstReport.metrics);
  const summaries = readFileSync(join(output, 'summary.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { overall: Record<string, number>; individual: Record<string, number> });
  assert.equal(summaries.length, 2, 'one line appended per evaluation');
  assert.deepEqual(summaries[1]?.overall, { avg_pass_at_1: 40, best_pass_at_1: 40, pass_at_1: 40 });
  assert.deepEqual(summaries[1]?.individual, { 'Round1_Pass@1': 40 });
}, 360_000);

test("DeepResearch's own result files: its termination strings, error lines and a resumed duplicate; judged by browsecomp and by exact match", async () => {
  const directory = join(environment.directory, 'deep-research');
  mkdirSync(directory, { recursive: true });
  const lines = (rollout: number) => [
    JSON.stringify({
      question: 'Capital of France?',
      answer: 'Paris',
      messages: [
        {
          role: 'assistant',
          content: '<tool_call>{"name": "search", "arguments": {"query": ["capital"]}}</tool_call>',
        },
      ],
      prediction: rollout === 1 ? 'Paris' : 'Lyon',
      termination: 'answer',
    }),
    JSON.stringify({
      question: 'Largest animal?',
      answer: 'Blue whale',
      error: 'Timeout',
      prediction: '[Failed]',
      messages: [],
    }),
    JSON.stringify({
      question: 'Largest animal?',
      answer: 'Blue whale',
      messages: [],
      prediction: 'The blue whale',
      termination: 'exceed available llm calls',
    }),
  ];
  const files = [1, 2].map((rollout) => {
    const path = join(directory, `run${rollout}.jsonl`);
    writeFileSync(path, `${lines(rollout).join('\n')}\n`);
    return path;
  });
  const output = join(directory, 'judged');
  const judgedRun = await cli(['eval', ...files, '--judge', 'browsecomp', '--output', output]);
  assert.equal(judgedRun.code, 0, judgedRun.stderr);
  assert.match(judgedRun.stderr, /Rollout 1: 1 duplicate line/);
  const judgedReport = report(output);
  assert.equal(judgedReport.metrics.questions, 2);
  // rollout 1: Paris ✓, whale ✓; rollout 2: Lyon ✗, whale ✓ → 1, 1/2; mean 3/4; any 1.
  assert.deepEqual(
    judgedReport.metrics.perRollout.map((rollout) => rollout.passAt1),
    [1, 0.5],
  );
  expect(judgedReport.metrics.meanPassAt1).toBeCloseTo(0.75, 10);
  assert.equal(judgedReport.metrics.passAtAllRollouts, 1);
  assert.deepEqual(judgedReport.statistics.all.terminations, { answer: 2, max_calls: 2 });
  assert.deepEqual(judgedReport.duplicates, [
    { rollout: 1, lines: 1 },
    { rollout: 2, lines: 1 },
  ]);

  const matchedOutput = join(directory, 'matched');
  const matched = await cli(['eval', ...files, '--output', matchedOutput]);
  assert.equal(matched.code, 0, matched.stderr);
  const matchedReport = report(matchedOutput);
  assert.equal(matchedReport.method, 'exact_match');
  // "The blue whale" is an exact match of "Blue whale" after normalisation; Lyon is not.
  assert.deepEqual(
    matchedReport.metrics.perRollout.map((rollout) => [rollout.passAt1, rollout.exactMatch]),
    [
      [1, 1],
      [0.5, 0.5],
    ],
  );
}, 360_000);

test('bad input: not JSON lines names the file and line; no reference answers refuses scoring but writes the statistics', async () => {
  const broken = batchDirectory('broken', [[ourLine('q?', 'a', 'a'), '{"question": "half a line"']]);
  const outcome = await cli(['eval', broken]);
  assert.equal(outcome.code, 2);
  assert.match(outcome.stderr, new RegExp(`${join(broken, 'iter1.jsonl')} line 2 is not JSON`));

  const unreferenced = batchDirectory('unreferenced', [
    [ourLine('q1?', '', 'x'), ourLine('q2?', '', 'y'), JSON.stringify({ answer: 'no question here' })],
  ]);
  const refused = await cli(['eval', unreferenced, '--judge', 'gaia']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /No line has a reference answer/);
  assert.match(refused.stderr, /Skipped iter1\.jsonl line 3: no "question"/);
  const statistics = report(join(unreferenced, 'evaluation'));
  assert.equal(statistics.statistics.all.runs, 2);
  assert.deepEqual(
    statistics.skipped.map((skip) => skip.line),
    [3],
  );
}, 240_000);

test('a judge endpoint that is down: retried, then the evaluation fails naming the variable', async () => {
  const queue = `${environment.taskQueue}-judge-down`;
  const port = await closedPort();
  await environment.startWorker({
    REACT_AGENT_TASK_QUEUE: queue,
    REACT_AGENT_JUDGE_BASE_URL: `http://127.0.0.1:${port}/v1`,
    REACT_AGENT_JUDGE_MODEL: 'judge-model',
  });
  const directory = batchDirectory('judge-down', [
    [ourLine('The clean question, judged by nobody?', 'Paris', 'Paris')],
  ]);
  const outcome = await cli(['eval', directory, '--judge', 'gaia'], {
    REACT_AGENT_TASK_QUEUE: queue,
    REACT_AGENT_JUDGE_MAX_ATTEMPTS: '2',
  });
  assert.equal(outcome.code, 1, outcome.stdout);
  assert.match(
    outcome.stderr,
    new RegExp(
      `failed: The judge endpoint http://127\\.0\\.0\\.1:${port}/v1 could not be reached .*Check REACT_AGENT_JUDGE_BASE_URL`,
    ),
  );
  const [evaluation] = await (async () => {
    const found = [];
    for await (const workflow of environment.client.workflow.list({
      query: `WorkflowType = 'evaluation' AND TaskQueue = '${queue}'`,
    }))
      found.push(workflow);
    return found;
  })();
  assert.equal(evaluation?.status.name, 'FAILED');
  const history = await environment.client.workflow.getHandle(evaluation?.workflowId as string).fetchHistory();
  const failed = history.events?.find((event) => event.activityTaskFailedEventAttributes);
  assert.equal(failed?.activityTaskFailedEventAttributes?.retryState, 4 /* RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED */);
  const started = history.events?.find(
    (event) => String(event.eventId) === String(failed?.activityTaskFailedEventAttributes?.startedEventId),
  );
  assert.equal(
    started?.activityTaskStartedEventAttributes?.attempt,
    2,
    'retried once (REACT_AGENT_JUDGE_MAX_ATTEMPTS=2)',
  );
}, 240_000);

test('eval compare on two evaluations: deltas, flipped questions, termination shifts, and an HTML page', async () => {
  const baseline = batchDirectory('compare-a', [
    [ourLine('Alpha?', 'a', 'a'), ourLine('Beta?', 'b', 'b'), ourLine('Gamma?', 'c', 'x')],
  ]);
  const candidate = batchDirectory('compare-b', [
    [
      ourLine('Alpha?', 'a', 'a'),
      ourLine('Beta?', 'b', 'wrong', { termination: 'max_calls' }),
      ourLine('Gamma?', 'c', 'c'),
    ],
  ]);
  for (const directory of [baseline, candidate]) assert.equal((await cli(['eval', directory])).code, 0);
  const outcome = await cli([
    'eval',
    'compare',
    join(baseline, 'evaluation'),
    join(candidate, 'evaluation', 'report.json'),
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.match(outcome.stdout, /mean_pass_at_1\s+66\.67%\s+66\.67%\s+\+0\.00 pt/);
  assert.match(outcome.stdout, /right → wrong: 1\n {2}Beta\?/);
  assert.match(outcome.stdout, /wrong → right: 1\n {2}Gamma\?/);
  assert.match(outcome.stdout, /max_calls\s+0 \(0\.0%\)\s+1 \(33\.3%\)\s+\+1/);
  const page = join(candidate, 'evaluation', 'compare.html');
  assert.match(outcome.stdout, new RegExp(`Comparison page: ${page}`));
  assert.match(readFileSync(page, 'utf8'), /Beta\?/);
}, 240_000);

test('batch --evaluate --wait: the batch evaluates itself when it ends (an evaluation child; exact match), the CLI prints the table and the path of the report.html the worker wrote', async () => {
  const input = join(environment.directory, 'evaluate-questions.jsonl');
  writeFileSync(
    input,
    `${JSON.stringify({ question: 'Capital of France?', answer: 'Paris' })}\n${JSON.stringify({ question: 'What is 2+2?', answer: '4' })}\n`,
  );
  const output = join(environment.directory, 'evaluated-batch');
  const outcome = await cli([
    'batch',
    input,
    '--output',
    output,
    '--rollouts',
    '2',
    '--evaluate',
    '--wait',
    '--max-calls',
    '3',
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const [batchId] = outcome.stdout.trim().split('\n');
  const evaluated = report(join(output, 'evaluation'));
  assert.equal(evaluated.method, 'exact_match');
  assert.equal(evaluated.source.batchId, batchId);
  assert.deepEqual(
    evaluated.metrics.perRollout.map((rollout) => rollout.passAt1),
    [1, 0],
  );
  assert.equal(evaluated.metrics.passAtAllRollouts, 1);
  assert.match(outcome.stdout, /mean_pass_at_1\s+50\.00% \(Avg\. Pass@2\)/);
  assert.ok(existsSync(join(output, 'evaluation', 'report.html')));

  // Cost per rollout and per correct answer (issue 19), from what each run's line says it cost.
  const lineCosts = [1, 2].map((rollout) =>
    readFileSync(join(output, `iter${rollout}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { usage: { costUsd?: number } }).usage.costUsd ?? Number.NaN),
  );
  const rolloutCost = lineCosts.map((costs) => costs.reduce((sum, cost) => sum + cost, 0));
  const totalCost = (rolloutCost[0] ?? 0) + (rolloutCost[1] ?? 0);
  assert.ok(
    totalCost > 0 && lineCosts.flat().every((cost) => cost > 0),
    `every run has a cost: ${JSON.stringify(lineCosts)}`,
  );
  const near = (actual: number | undefined, expected: number, what: string) =>
    assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-12, `${what}: ${actual}, expected ${expected}`);
  near(evaluated.metrics.cost?.totalUsd, totalCost, 'the report’s cost');
  near(evaluated.metrics.cost?.perRolloutUsd, totalCost / 4, 'per rollout: 2 questions × 2 rollouts');
  near(evaluated.metrics.cost?.perCorrectAnswerUsd, totalCost / 2, 'per correct answer: rollout 1 answered both');
  near(
    evaluated.metrics.perRollout[0]?.cost?.perCorrectAnswerUsd,
    (rolloutCost[0] ?? Number.NaN) / 2,
    'rollout 1 per correct answer: its cost over its 2 correct answers',
  );
  assert.equal(
    evaluated.metrics.perRollout[1]?.cost?.perCorrectAnswerUsd,
    undefined,
    'rollout 2 answered nothing right: no figure',
  );
  const summary = (await environment.client.workflow.getHandle(batchId as string).result()) as BatchSummary;
  near(summary.cost?.totalUsd, totalCost, 'the batch summary’s cost');
  near(summary.perRollout[1]?.cost?.perRolloutUsd, (rolloutCost[1] ?? 0) / 2, 'the summary’s rollout 2 per rollout');
  near(summary.evaluation?.headline?.cost?.perCorrectAnswerUsd, totalCost / 2, 'the summary’s evaluation headline');
  const perCorrect = formatUsd(totalCost / 2).replace(/[$.]/g, '\\$&');
  assert.match(
    outcome.stdout,
    new RegExp(`\n {2}cost: \\$[0-9.]+ in all · \\$[0-9.]+ per rollout · ${perCorrect} per correct answer`),
    outcome.stdout,
  );
  const html = readFileSync(join(output, 'evaluation', 'report.html'), 'utf8');
  assert.match(
    html,
    new RegExp(
      `<tr data-metric="cost per correct answer"><th scope="row">cost per correct answer</th><td class="number">${perCorrect}</td>`,
    ),
  );
  assert.match(outcome.stdout, new RegExp(`Report: ${join(output, 'evaluation', 'report.html')}`));
  const child = await environment.client.workflow.getHandle(`${batchId}/evaluation`).describe();
  assert.equal(child.type, 'evaluation');
  assert.equal(child.status.name, 'COMPLETED');
}, 300_000);

test('batch --evaluate without --wait (as a schedule starts it): the worker alone writes report.html with the per-question table, no CLI renders it', async () => {
  const input = join(environment.directory, 'unwaited-questions.jsonl');
  writeFileSync(
    input,
    `${JSON.stringify({ question: 'Capital of France?', answer: 'Paris' })}\n${JSON.stringify({ question: 'What is 2+2?', answer: '4' })}\n`,
  );
  const output = join(environment.directory, 'unwaited-batch');
  const started = await cli(['batch', input, '--output', output, '--rollouts', '2', '--evaluate', '--max-calls', '3']);
  assert.equal(started.code, 0, started.stderr);
  const [batchId] = started.stdout.trim().split('\n');
  assert.ok(batchId);
  // The CLI has exited; the batch and its evaluation child finish in the worker.
  const summary = (await environment.client.workflow.getHandle(batchId).result()) as {
    evaluation?: { reportPath?: string; failed?: string };
  };
  assert.equal(summary.evaluation?.failed, undefined);
  assert.equal(summary.evaluation?.reportPath, join(output, 'evaluation', 'report.json'));
  const evaluation = (await environment.client.workflow
    .getHandle(`${batchId}/evaluation`)
    .result()) as EvaluationOutcome;
  assert.equal(evaluation.htmlPath, join(output, 'evaluation', 'report.html'));
  assert.equal(evaluation.htmlProblem, undefined);
  const html = readFileSync(join(output, 'evaluation', 'report.html'), 'utf8');
  assert.match(html, /<table class="questions">/);
  assert.equal(html.match(/<tr class="question-row"/g)?.length, 2);
  assert.match(html, /Capital of France\?/);
  assert.match(html, /What is 2\+2\?/);
}, 300_000);
