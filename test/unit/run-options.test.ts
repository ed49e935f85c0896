import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  budgetOptionSpecs,
  budgetOptionsUsage,
  budgetsFrom,
  everyRunOptionSpecs,
  everyRunOptionsHelp,
  oneRunOptionSpecs,
  oneRunOptionsHelp,
} from '../../src/cli/run-options';
import { UsageError } from '../../src/cli/usage-error';

/*
 * The run options are one table (src/cli/run-options.ts); `run`/`start`, `batch`/`schedule` and
 * `limits` read their flags and help from it. The helps below are the texts these commands showed
 * when each wrote its own copy: the table must render them unchanged (with --subruns and
 * --subrun-depth, issue 30, added since).
 */
describe('the run-option table', () => {
  test('renders the help of run and start as before', () => {
    assert.equal(
      oneRunOptionsHelp,
      `  --answer TEXT        reference answer, kept in the result for evaluation
  --max-calls N        model-call budget (default 100)
  --max-minutes N      wall-time budget in minutes (default 150)
  --max-tokens N       context budget in tokens (default 110000)
  --max-cost USD       cost budget in US dollars at the workers' prices (REACT_AGENT_MODEL_PRICES;
                       default none): at it the run asks for its final answer and ends cost_limit
  --tools a,b          tools the run may use, or none (default: all the worker has)
  --model NAME         model for this run (default: the worker's REACT_AGENT_MODEL)
  --protocol NAME      deep-research (default), native (OpenAI tool calls) or classic (Thought/Action)
  --subruns N          let the run delegate sub-questions to sub-runs, N at once (1 to 16; default
                       off): it is offered the delegate tool; their limits come out of its own
  --subrun-depth D     levels of sub-runs below the run, with --subruns (1 to 3; default 1)
  --id ID              workflow id (default: research-<question words>-<time>-<random>)`,
    );
  });

  test('renders the run options of batch and schedule as before', () => {
    assert.equal(
      everyRunOptionsHelp,
      `Run options (every run of the batch):
  --max-calls N          model-call budget per run (default 100)
  --max-minutes N        wall-time budget per run in minutes (default 150)
  --max-tokens N         context budget in tokens (default 110000)
  --max-cost USD         cost budget per run in US dollars at the workers' prices (default none)
  --tools a,b            tools the runs may use, or none (default: all the worker has)
  --model NAME           model (default: the worker's REACT_AGENT_MODEL)
  --protocol NAME        deep-research, native, classic (default deep-research)
  --subruns N            let every run delegate to sub-runs, N at once (1 to 16; default off)
  --subrun-depth D       levels of sub-runs below each run, with --subruns (1 to 3; default 1)
  --temperature T        sampling temperature (default the worker's, 0.6)
  --top-p P              nucleus sampling (default the worker's, 0.95)
  --max-output-tokens N  longest reply (default the worker's, 10000)
  --model-share S        share of the model's shared limits the runs may use (0.01 to 1; default 1)`,
    );
  });

  test('renders the usage of limits as before', () => {
    assert.equal(
      budgetOptionsUsage,
      '[--max-calls N] [--max-minutes N] [--max-tokens N] [--max-total-tokens N] [--max-cost USD]',
    );
  });

  test('gives each kind of command its flags', () => {
    assert.deepEqual(Object.keys(oneRunOptionSpecs), [
      'answer',
      'max-calls',
      'max-minutes',
      'max-tokens',
      'max-cost',
      'tools',
      'model',
      'protocol',
      'subruns',
      'subrun-depth',
      'id',
    ]);
    assert.deepEqual(Object.keys(everyRunOptionSpecs), [
      'max-calls',
      'max-minutes',
      'max-tokens',
      'max-cost',
      'tools',
      'model',
      'protocol',
      'subruns',
      'subrun-depth',
      'temperature',
      'top-p',
      'max-output-tokens',
      'model-share',
    ]);
    assert.deepEqual(Object.keys(budgetOptionSpecs), [
      'max-calls',
      'max-minutes',
      'max-tokens',
      'max-total-tokens',
      'max-cost',
    ]);
    for (const specs of [oneRunOptionSpecs, everyRunOptionSpecs, budgetOptionSpecs])
      for (const spec of Object.values(specs)) assert.deepEqual(spec, { type: 'string' });
  });
});

describe('budgetsFrom', () => {
  const flags = Object.keys(budgetOptionSpecs);

  test('maps each budget flag to its limit, leaving out what is not given', () => {
    assert.deepEqual(
      budgetsFrom(
        { 'max-calls': '5', 'max-minutes': '1.5', 'max-tokens': '900', 'max-total-tokens': '5000', 'max-cost': '$2' },
        flags,
        'help',
        { checkRanges: false },
      ),
      {
        maxModelCalls: 5,
        maxDurationMinutes: 1.5,
        maxContextTokens: 900,
        maxTotalTokens: 5000,
        maxCostUsd: 2,
      },
    );
    assert.deepEqual(budgetsFrom({}, flags, 'help', { checkRanges: false }), {});
  });

  test('reads only the flags it is given', () => {
    assert.deepEqual(
      budgetsFrom({ 'max-total-tokens': '5000', 'max-calls': '3' }, Object.keys(oneRunOptionSpecs), 'help', {
        checkRanges: false,
      }),
      { maxModelCalls: 3 },
    );
  });

  test('leaves numbers to the run’s own checks, or checks their range', () => {
    assert.ok(Number.isNaN(budgetsFrom({ 'max-calls': 'many' }, flags, 'help', { checkRanges: false }).maxModelCalls));
    assert.deepEqual(budgetsFrom({ 'max-calls': '0' }, flags, 'help', { checkRanges: false }), { maxModelCalls: 0 });
    assert.throws(
      () => budgetsFrom({ 'max-calls': '0' }, flags, 'help', { checkRanges: true }),
      (error: unknown) =>
        error instanceof UsageError &&
        /--max-calls must be a whole number from 1 to 10000, got "0"/.test(error.message),
    );
    assert.throws(
      () => budgetsFrom({ 'max-minutes': '0.001' }, flags, 'help', { checkRanges: true }),
      /--max-minutes must be a number from 0.01 to 10080/,
    );
  });

  test('reads --max-cost as dollars above 0 either way', () => {
    assert.throws(
      () => budgetsFrom({ 'max-cost': '0' }, flags, 'help', { checkRanges: false }),
      /--max-cost must be a number of US dollars above 0/,
    );
    assert.throws(
      () => budgetsFrom({ 'max-cost': 'lots' }, flags, 'help', { checkRanges: true }),
      /--max-cost must be/,
    );
  });
});
