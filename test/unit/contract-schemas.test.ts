import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { CONTRACT_PAYLOADS, SCHEMA_DIRECTORY, generateContractSchemas } from '../../scripts/generate-schemas';
import { validateAgainstSchema } from '../../src/core/json-schema-validation';
import type { JsonSchema } from '../../src/core/tool-spec';

/*
 * The client contract's JSON Schemas (schemas/) are generated from the TypeScript types; these
 * tests fail when a type changed and `npm run schemas` was not run, and check the schemas against
 * real payloads: every input and result recorded in the replay fixtures (real runs, batches and
 * evaluations) is valid under its schema.
 */

const HISTORIES = join(__dirname, '../fixtures/histories');

function schema(file: string): JsonSchema {
  return JSON.parse(readFileSync(join(SCHEMA_DIRECTORY, file), 'utf8')) as JsonSchema;
}

interface HistoryEvent {
  workflowExecutionStartedEventAttributes?: {
    workflowType: { name: string };
    input?: { payloads: Array<{ data: string }> };
  };
  workflowExecutionCompletedEventAttributes?: { result?: { payloads: Array<{ data: string }> } };
}

/** The first run's input and the last run's result of each recorded history, by workflow type. */
function recordedPayloads(): Array<{ history: string; type: string; input: unknown; result?: unknown }> {
  const decode = (data: string) => JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as unknown;
  return readdirSync(HISTORIES)
    .filter((name) => name.endsWith('.json'))
    .map((name) => {
      const { events } = JSON.parse(readFileSync(join(HISTORIES, name), 'utf8')) as { events: HistoryEvent[] };
      const started = events[0]?.workflowExecutionStartedEventAttributes;
      const completed = events.find(
        (event) => event.workflowExecutionCompletedEventAttributes,
      )?.workflowExecutionCompletedEventAttributes;
      const resultData = completed?.result?.payloads[0]?.data;
      return {
        history: name,
        type: started?.workflowType.name ?? '?',
        input: decode(started?.input?.payloads[0]?.data ?? 'bnVsbA=='),
        result: resultData === undefined ? undefined : decode(resultData),
      };
    });
}

describe('the contract schemas', () => {
  test('schemas/ holds exactly what the TypeScript types generate (run `npm run schemas` after changing them)', () => {
    const generated = generateContractSchemas();
    // Copied into this realm (jest: arrays Node creates compare unequal otherwise).
    const onDisk = [...readdirSync(SCHEMA_DIRECTORY).filter((name) => name.endsWith('.json'))].sort();
    assert.deepEqual(onDisk, [...generated.keys()].sort());
    for (const [name, text] of generated)
      assert.equal(
        readFileSync(join(SCHEMA_DIRECTORY, name), 'utf8'),
        text,
        `schemas/${name} is out of date: run npm run schemas`,
      );
  });

  test('each schema refuses unknown fields and names its source type', () => {
    for (const payload of CONTRACT_PAYLOADS) {
      const loaded = schema(payload.file) as {
        $ref: string;
        definitions: Record<string, { additionalProperties?: unknown }>;
        $comment: string;
      };
      assert.equal(loaded.$ref, `#/definitions/${payload.type}`);
      assert.match(loaded.$comment, new RegExp(`from ${payload.type} in ${payload.source.replace(/\./g, '\\.')}`));
      const root = loaded.definitions[payload.type];
      assert.ok(root, `${payload.file} defines ${payload.type}`);
    }
    assert.deepEqual(validateAgainstSchema(schema('researchAgent.input.json'), { question: 'q', qestion2: 1 }, ''), [
      'qestion2 is not a known field (known: question, answer, limits, model, tools, protocol, loop, answerSchema, subruns)',
    ]);
  });

  const schemaOfType: Record<string, { input: string; result: string }> = {
    researchAgent: { input: 'researchAgent.input.json', result: 'researchAgent.result.json' },
    researchBatch: { input: 'researchBatch.input.json', result: 'researchBatch.result.json' },
    evaluation: { input: 'evaluation.input.json', result: 'evaluation.result.json' },
  };

  test('every input and result recorded in the replay fixtures is valid under its schema', () => {
    const recorded = recordedPayloads();
    const types = new Set(recorded.map((entry) => entry.type));
    for (const type of Object.keys(schemaOfType)) assert.ok(types.has(type), `a recorded ${type} history`);
    let checkedResults = 0;
    for (const { history, type, input, result } of recorded) {
      // The model limiter (issue 33) is started by model calls, never by clients: no client contract, no schemas.
      if (type === 'modelLimiter') continue;
      const files = schemaOfType[type];
      assert.ok(files, `${history}: workflow type ${type} has schemas`);
      // A continued run's input carries the workflow's own `resume` and `resumedFrom`; clients never send them.
      const { resume: _resume, resumedFrom: _resumedFrom, ...request } = input as Record<string, unknown>;
      const inputProblems = validateAgainstSchema(schema(files.input), type === 'researchAgent' ? request : input, '');
      // A continued batch carries its own `carry` in the input, which the schema documents.
      assert.deepEqual(inputProblems, [], `${history}: input`);
      if (result !== undefined) {
        assert.deepEqual(validateAgainstSchema(schema(files.result), result, ''), [], `${history}: result`);
        checkedResults++;
      }
    }
    assert.ok(checkedResults >= 10, `checked ${checkedResults} results`);
  });
});
