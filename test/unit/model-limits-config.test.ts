import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadModelLimits } from '../../src/config/model-limits-config';
import { modelLimitFor } from '../../src/core/model-limits/model-limit';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-limits-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function assertLimitsError(value: string, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    loadModelLimits({ REACT_AGENT_MODEL_LIMITS: value }, scratch);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigurationError, `a ConfigurationError for ${value}`);
  assert.equal(caught.variable, 'REACT_AGENT_MODEL_LIMITS');
  assert.match(caught.message, /REACT_AGENT_MODEL_LIMITS/);
  for (const pattern of patterns) assert.match(caught.message, pattern);
}

describe('REACT_AGENT_MODEL_LIMITS', () => {
  test('unset: no limits', () => {
    assert.deepEqual(loadModelLimits({}, scratch), {});
  });

  test('a JSON value, a file path or @path; a model its own limit, else "*"', () => {
    const json = '{"gpt-4.1": {"tokensPerMinute": 30000, "requestsPerMinute": 500}, "*": {"requestsPerMinute": 60}}';
    const limits = loadModelLimits({ REACT_AGENT_MODEL_LIMITS: json }, scratch);
    assert.deepEqual(modelLimitFor(limits, 'gpt-4.1'), { tokensPerMinute: 30000, requestsPerMinute: 500 });
    assert.deepEqual(modelLimitFor(limits, 'other'), { requestsPerMinute: 60 });
    assert.equal(modelLimitFor({ a: { tokensPerMinute: 1 } }, 'b'), undefined);
    writeFileSync(join(scratch, 'limits.json'), json);
    assert.deepEqual(loadModelLimits({ REACT_AGENT_MODEL_LIMITS: 'limits.json' }, scratch), limits);
    assert.deepEqual(loadModelLimits({ REACT_AGENT_MODEL_LIMITS: '@limits.json' }, scratch), limits);
  });

  test('clear errors naming the model and the field', () => {
    assertLimitsError('{not json', /not valid JSON/);
    assertLimitsError('[1]', /JSON object of model names/);
    assertLimitsError('{"m": 5}', /"m"/, /must be an object/);
    assertLimitsError('{"m": {}}', /"m"/, /tokensPerMinute or requestsPerMinute/);
    assertLimitsError('{"m": {"tokensPerMinute": 0}}', /"m"/, /tokensPerMinute must be a number above 0/);
    assertLimitsError('{"m": {"tokensPerMinute": "30k"}}', /tokensPerMinute/);
    assertLimitsError('{"m": {"tokensPerMinut": 30000}}', /unknown field "tokensPerMinut"/);
    assertLimitsError('{"m": {"requestsPerMinute": 5, "leaseSeconds": 0}}', /leaseSeconds/);
    assertLimitsError('missing.json', /missing\.json, which cannot be read \(ENOENT\)/);
  });
});
