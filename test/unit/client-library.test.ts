import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { InvalidResearchRequestError, WorkflowTypes, newRunId, questionSlug, startResearch } from '../../src/client';

/*
 * The client library (src/client, exported as `durable-react-agent/client`) without a server: a
 * stand-in Client records what startResearch would send to Temporal.
 */

function recordingClient(): { client: Client; starts: Array<{ type: string; options: Record<string, unknown> }> } {
  const starts: Array<{ type: string; options: Record<string, unknown> }> = [];
  const client = {
    workflow: {
      start: async (type: string, options: Record<string, unknown>) => {
        starts.push({ type, options });
        return { workflowId: options.workflowId };
      },
    },
  } as unknown as Client;
  return { client, starts };
}

describe('run ids', () => {
  test('carry a slug of the question, the UTC time and four random characters', () => {
    const id = newRunId('Which company sold more cars in 2024, BYD or Tesla?', new Date('2026-11-30T18:45:01Z'));
    assert.match(id, /^research-which-company-sold-more-cars-in-2024-byd-20261130-184501-[0-9a-z]{4}$/);
    assert.match(newRunId(undefined, new Date('2026-11-30T18:45:01Z')), /^research-20261130-184501-[0-9a-z]{4}$/);
  });

  test('slugs are ASCII, bounded at a word boundary, and empty when nothing ASCII is left', () => {
    assert.equal(questionSlug('Qu’est-ce que la Société Générale a déclaré ?'), 'qu-est-ce-que-la-societe-generale-a');
    assert.equal(questionSlug('比亚迪2024年销量'), '2024');
    assert.equal(questionSlug('中文问题'), '');
    assert.equal(questionSlug('a'.repeat(100)), 'a'.repeat(40));
    for (const question of ['x', 'What is 2+2?', 'word '.repeat(50), '\u0000\u{1F600} ok']) {
      const slug = questionSlug(question);
      assert.ok(
        slug.length <= 40 && /^[a-z0-9-]*$/.test(slug) && !slug.startsWith('-') && !slug.endsWith('-'),
        `${JSON.stringify(question)} → ${slug}`,
      );
    }
  });
});

describe('startResearch', () => {
  test('starts researchAgent by type name on the default queue, the question as summary', async () => {
    const { client, starts } = recordingClient();
    const handle = await startResearch(client, {
      question: 'Who first reached the South Pole?',
      limits: { maxModelCalls: 5 },
    });
    assert.equal(starts.length, 1);
    const [{ type, options }] = starts as [{ type: string; options: Record<string, unknown> }];
    assert.equal(type, WorkflowTypes.researchAgent);
    assert.equal(options.taskQueue, 'react-agent');
    assert.match(String(options.workflowId), /^research-who-first-reached-the-south-pole-\d{8}-\d{6}-[0-9a-z]{4}$/);
    assert.deepEqual(options.args, [{ question: 'Who first reached the South Pole?', limits: { maxModelCalls: 5 } }]);
    assert.equal(options.staticSummary, 'Who first reached the South Pole?');
    assert.equal(handle.workflowId, options.workflowId);
  });

  test('options win over the defaults', async () => {
    const { client, starts } = recordingClient();
    await startResearch(client, { question: 'q' }, { taskQueue: 'agents', workflowId: 'my-run', memo: { team: 'a' } });
    assert.equal(starts[0]?.options.taskQueue, 'agents');
    assert.equal(starts[0]?.options.workflowId, 'my-run');
    assert.deepEqual(starts[0]?.options.memo, { team: 'a' });
  });

  test('a bad request is refused before it reaches Temporal, each problem naming its field', async () => {
    const { client, starts } = recordingClient();
    await assert.rejects(
      startResearch(client, { question: '', limits: { maxModelCalls: 0 }, colour: 'red' } as never),
      (error: unknown) => {
        assert.ok(error instanceof InvalidResearchRequestError);
        assert.deepEqual(error.problems, [
          'question must not be empty',
          'limits.maxModelCalls must be an integer from 1 to 10000, got 0',
          'colour is not a known field (known: question, answer, limits, model, tools, protocol, loop, answerSchema, subruns)',
        ]);
        return true;
      },
    );
    assert.equal(starts.length, 0);
  });
});
