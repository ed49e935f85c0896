import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { batchRunTemplateFrom } from '../../src/cli/batch-preparation';
import { costBudgetPriceProblem, costOption } from '../../src/cli/cost-option';
import { runInputFrom } from '../../src/cli/start-run';
import { UsageError } from '../../src/cli/usage-error';
import type { CallModelOutput } from '../../src/core/activity-contracts';
import {
  closingReason,
  finalAnswerReason,
  noAnswerPrediction,
  unpricedCostBudgetError,
} from '../../src/core/ending-texts';
import { concludeRun, finalAnswerCause } from '../../src/core/run-ending';
import { validateRunInput } from '../../src/core/run-input';
import {
  budgetEndBeforeModelCall,
  costBudgetEndsLoop,
  costBudgetWithoutPrice,
  costUsedUp,
  remainingBudgets,
} from '../../src/core/run-budgets';
import { DEFAULT_LIMITS, type RunLimits } from '../../src/core/run-limits';
import type { RunState } from '../../src/core/run-state';
import { limitChangesProblem } from '../../src/core/run-steering';
import { applyModelReply, changeLimits, initialRunState } from '../../src/core/run-transitions';
import { TERMINATIONS, terminationOfBudgetEnd } from '../../src/core/termination';

/* Issue 19: a budget in money (`limits.maxCostUsd`, `--max-cost`), ending `cost_limit` through the final answer. */

const fresh = (limits: RunLimits = DEFAULT_LIMITS): RunState => initialRunState('deep-research', limits, 1_000);
const help = 'help text';

function reply(costUsd: number | undefined): CallModelOutput {
  return {
    conversation: 'sha256:after',
    assistant: { ref: 'sha256:reply', preview: 'reply', characters: 5 },
    turn: { thought: 'thinking', toolCalls: [] },
    usage: {
      promptTokens: 1_000,
      completionTokens: 100,
      totalTokens: 1_100,
      ...(costUsd !== undefined ? { costUsd } : {}),
    },
    contextTokens: 1_100,
    finishReason: 'stop',
  } as CallModelOutput;
}

/** The state after model calls of these costs (undefined: no price). */
function afterCalls(limits: Partial<RunLimits>, costs: Array<number | undefined>): RunState {
  let state = fresh({ ...DEFAULT_LIMITS, ...limits });
  for (const cost of costs) state = applyModelReply({ ...state, modelCalls: state.modelCalls + 1 }, reply(cost), false);
  return state;
}

describe('the cost budget', () => {
  test('a call of a priced model is summed and kept as the last call’s cost; an unpriced one leaves both as they were', () => {
    const state = afterCalls({}, [0.25, 0.5]);
    assert.equal(state.usage.costUsd, 0.75);
    assert.equal(state.lastCallCostUsd, 0.5);
    const unpriced = afterCalls({}, [undefined]);
    assert.equal('costUsd' in unpriced.usage, false);
    assert.equal('lastCallCostUsd' in unpriced, false);
  });

  test('with the final answer phase, it is used up once what was spent plus one more call like the last reaches the budget', () => {
    // Calls of 0.1 USD each, budget 0.35: after 3 calls 0.3 + 0.1 ≥ 0.35, so the 4th call is the final answer's (0.4 in all).
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.35 }, [0.1, 0.1]), true), false, '0.2 + 0.1 < 0.35');
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.35 }, [0.1, 0.1, 0.1]), true), true, '0.3 + 0.1 ≥ 0.35');
    // Reaching the budget exactly counts: the final answer call then ends the run at it.
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.4 }, [0.125, 0.125]), true), false);
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.375 }, [0.125, 0.125]), true), true);
  });

  test('without the final answer phase no room is kept: used up when what was spent reaches the budget', () => {
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.35 }, [0.1, 0.1, 0.1]), false), false);
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0.35 }, [0.1, 0.1, 0.1, 0.1]), false), true);
  });

  test('no budget (absent or 0) and no cost yet never use it up', () => {
    assert.equal(costUsedUp(afterCalls({}, [5, 5]), true), false);
    assert.equal(costUsedUp(afterCalls({ maxCostUsd: 0 }, [5, 5]), true), false);
    assert.equal(costUsedUp(fresh({ ...DEFAULT_LIMITS, maxCostUsd: 0.01 }), true), false, 'before the first call');
    assert.equal(
      costUsedUp(afterCalls({ maxCostUsd: 0.01 }, [undefined]), true),
      false,
      'an unpriced call adds no cost',
    );
  });

  test('checked before a model call after time, calls and total tokens; the marker is asked only when it ends the run', () => {
    const used = afterCalls({ maxCostUsd: 0.15, maxModelCalls: 10 }, [0.1, 0.1]);
    const with_ = (costBudget: boolean) => ({ finalAnswerPhase: true, costBudget });
    assert.equal(costBudgetEndsLoop(used, 2_000, true), true, 'the marker is asked');
    assert.equal(budgetEndBeforeModelCall(used, 2_000, with_(true)), 'cost_limit');
    assert.equal(
      budgetEndBeforeModelCall(used, 2_000, with_(false)),
      undefined,
      'a history recorded before the marker goes on',
    );
    const outOfCalls = { ...used, modelCalls: 10 };
    assert.equal(costBudgetEndsLoop(outOfCalls, 2_000, true), false, 'calls first: the marker is not asked');
    assert.equal(budgetEndBeforeModelCall(outOfCalls, 2_000, with_(false)), 'max_calls');
    const within = afterCalls({ maxCostUsd: 1 }, [0.1]);
    assert.equal(costBudgetEndsLoop(within, 2_000, true), false, 'not asked when the budget is not used up');
    assert.equal(budgetEndBeforeModelCall(within, 2_000, with_(true)), undefined);
  });

  test('a run with the budget whose call came back without a cost cannot be held to it', () => {
    assert.equal(costBudgetWithoutPrice(afterCalls({ maxCostUsd: 1 }, [undefined])), true);
    assert.equal(costBudgetWithoutPrice(afterCalls({ maxCostUsd: 1 }, [0.1])), false);
    assert.equal(costBudgetWithoutPrice(afterCalls({}, [undefined])), false, 'no budget');
    assert.equal(costBudgetWithoutPrice(fresh({ ...DEFAULT_LIMITS, maxCostUsd: 1 })), false, 'no call yet');
    assert.match(
      unpricedCostBudgetError(0.5, 'gpt-x'),
      /limits\.maxCostUsd 0\.5 USD.*no price for the model "gpt-x".*REACT_AGENT_MODEL_PRICES/,
    );
  });

  test('what is left of it, in progress', () => {
    assert.equal(remainingBudgets(afterCalls({ maxCostUsd: 1 }, [0.25]), 2_000).costUsd, 0.75);
    assert.equal(remainingBudgets(afterCalls({ maxCostUsd: 0.2 }, [0.25]), 2_000).costUsd, 0, 'never below 0');
    assert.equal(
      remainingBudgets(afterCalls({ maxCostUsd: 1 }, [undefined]), 2_000).costUsd,
      1,
      'nothing spent without a price',
    );
    assert.equal('costUsd' in remainingBudgets(afterCalls({}, [0.25]), 2_000), false, 'no budget, no line');
  });

  test('cost_limit is a termination of its own, reached through the final answer phase', () => {
    assert.ok((TERMINATIONS as readonly string[]).includes('cost_limit'));
    assert.equal(terminationOfBudgetEnd('cost_limit'), 'cost_limit');
    assert.equal(finalAnswerCause({ kind: 'budget_ended', budget: 'cost_limit' }, true), 'cost_limit');
    assert.equal(finalAnswerCause({ kind: 'budget_ended', budget: 'cost_limit' }, false), undefined);
    assert.deepEqual(
      concludeRun({ kind: 'budget_ended', budget: 'cost_limit', lastAnswer: { text: 'best guess' } }, DEFAULT_LIMITS),
      { termination: 'cost_limit', prediction: 'best guess' },
    );
    assert.equal(
      concludeRun({ kind: 'budget_ended', budget: 'cost_limit' }, DEFAULT_LIMITS).prediction,
      noAnswerPrediction('cost_limit', DEFAULT_LIMITS),
    );
    assert.match(finalAnswerReason('cost_limit', ''), /money/);
    assert.equal(closingReason('cost_limit'), 'Not run: the run ended (cost_limit).');
  });

  test('the contract: a number of USD, at least 0; setLimits may change it', () => {
    assert.deepEqual(validateRunInput({ question: 'q', limits: { maxCostUsd: 0.5 } }).problems, []);
    assert.notDeepEqual(validateRunInput({ question: 'q', limits: { maxCostUsd: -1 } }).problems, []);
    assert.notDeepEqual(
      validateRunInput({ question: 'q', limits: { maxCostUsd: 'much' as unknown as number } }).problems,
      [],
    );
    const state = afterCalls({ maxCostUsd: 1 }, [0.25]);
    assert.equal(limitChangesProblem(state, { maxCostUsd: 2 }, 2_000), undefined);
    assert.match(limitChangesProblem(state, { maxCostUsd: -2 }, 2_000) ?? '', /maxCostUsd/);
    assert.equal(changeLimits(state, { maxCostUsd: 2 }).limits.maxCostUsd, 2);
  });
});

describe('--max-cost on the command line', () => {
  test('a number of dollars above 0, with or without $', () => {
    assert.equal(costOption(undefined, help), undefined);
    assert.equal(costOption('0.5', help), 0.5);
    assert.equal(costOption('$2', help), 2);
    for (const bad of ['-1', 'abc', 'NaN', '', '0', 'Infinity']) {
      assert.throws(
        () => costOption(bad, help),
        (error: unknown) =>
          error instanceof UsageError && /--max-cost must be a number of US dollars above 0/.test(error.message),
        bad,
      );
    }
  });

  test('run and batch put it in the limits', () => {
    assert.deepEqual(runInputFrom('q', { 'max-cost': '0.25', 'max-calls': '5' }, help).limits, {
      maxModelCalls: 5,
      maxCostUsd: 0.25,
    });
    assert.deepEqual(batchRunTemplateFrom({ 'max-cost': '1.5' }, help), { limits: { maxCostUsd: 1.5 } });
    assert.throws(() => runInputFrom('q', { 'max-cost': '-3' }, help), /--max-cost must be/);
    assert.throws(() => batchRunTemplateFrom({ 'max-cost': 'lots' }, help), /--max-cost must be/);
  });

  test('`run` starting its own worker refuses a cost budget for a model its prices lack, before any call', () => {
    const prices = { 'gpt-4o-mini': { input: 0.15, output: 0.6 } };
    assert.equal(costBudgetPriceProblem(0.5, 'gpt-4o-mini', prices), undefined);
    assert.equal(costBudgetPriceProblem(undefined, 'local-model', {}), undefined, 'no budget, nothing to check');
    assert.match(
      costBudgetPriceProblem(0.5, 'local-model', prices) ?? '',
      /--max-cost needs a price for the model "local-model".*\(it prices gpt-4o-mini\).*REACT_AGENT_MODEL_PRICES='\{"local-model"/,
    );
    assert.match(costBudgetPriceProblem(0.5, 'local-model', {}) ?? '', /has none: the budget could never end the run/);
  });
});
