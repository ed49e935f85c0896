import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { toOpenAIMessage } from '../../activities/model/openai-messages';
import { progressQuery } from '../../src/core/message-definitions';
import type { ChatMessage } from '../../src/core/messages';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { activityOutcomes } from './support/run-history';
import { transcriptProblems } from './support/transcript-checks';

// Issue 16, "a first local run answers", against the real thing: llama-server with a small
// context (-c 2048) and a model that keeps calling tools. The run learns the window from
// llama-server's /props at its start, keeps its prompts under it, ends token_limit when the
// context is full, and its final answer call gets a prompt that fits: the answer's text, not
// "No answer found" after a 400.
//
// The tiny model calls a tool until the conversation holds a tool result (README: its habits).
// To make it keep calling tools, llama-server renders the conversation with a chat template that
// shows tool results as <tool_result> (templates/chatml-tool-results-hidden.jinja), except in a
// last message that asks for the final answer, which it then answers; the grammar
// (grammars/deep-research.gbnf) keeps every reply a well-formed tag reply.

const CONTEXT_SIZE = 2_048;
/** Three short lookups, then a long one: the last one takes the context past its budget. */
const LOOKUP_CHARACTERS = [300, 300, 300, 2_500];
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const TEMPLATE = join(__dirname, 'templates', 'chatml-tool-results-hidden.jinja');
/** What a prompt may take of the window (a quarter kept for the reply, 3 % margin), and the most the final answer's may (a sixteenth for the answer). */
const PROMPT_BUDGET = CONTEXT_SIZE - 512 - 62;
const FINAL_PROMPT_LIMIT = CONTEXT_SIZE - 62 - 128;

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({
    llamaServer: {
      contextSize: CONTEXT_SIZE,
      grammar: 'deep-research.gbnf',
      extraArguments: ['--chat-template-file', TEMPLATE],
    },
  });
  await environment.startWorker(realServerToolsEnvironment({ lookupCharacters: LOOKUP_CHARACTERS }));
});

afterAll(async () => {
  await environment?.close();
});

/** What llama-server counts for a request of these messages. */
const serverTokens = (messages: ChatMessage[]) =>
  environment.llama.promptTokens({ messages: messages.map(toOpenAIMessage) });

test("a 2,048-token llama-server and a model that keeps calling tools: token_limit with the final answer's text, no prompt refused", async () => {
  const { handle, result, messages } = await environment.run({
    question: QUESTION,
    protocol: 'deep-research',
    tools: ['lookup'],
    // The model calls `lookup` of BYD every time: stuck detection would end the run first.
    loop: { stuckDetection: false, summarizeOldTurns: false },
    limits: { maxModelCalls: 30 },
  });
  const outcomes = await activityOutcomes(handle);

  assert.equal(result.termination, 'token_limit', `ended ${result.termination}: ${result.error ?? result.prediction}`);
  assert.equal(result.prediction, 'The answer is above.');
  assert.equal(result.error, undefined);
  assert.equal(result.details.finalAnswerPhase, 'token_limit');
  assert.equal(result.toolCalls, LOOKUP_CHARACTERS.length);

  // The window came from /props, at the start, asked by the startConversation local activity (issue 34's light
  // bookkeeping: no learnContextWindow activity of its own).
  assert.deepEqual(result.details.contextWindow, {
    tokens: CONTEXT_SIZE,
    source: 'llama-server /props (default_generation_settings.n_ctx)',
    promptBudget: PROMPT_BUDGET,
  });
  assert.equal(outcomes.filter((outcome) => outcome.activity === 'learnContextWindow').length, 0);
  assert.equal((await handle.query(progressQuery)).contextBudget, PROMPT_BUDGET);

  // No model call was refused; the final answer's prompt, as llama-server counts it, fits its context.
  assert.deepEqual(
    outcomes.filter((outcome) => outcome.failure !== undefined),
    [],
  );
  assert.deepEqual(transcriptProblems(messages, 'deep-research'), []);
  assert.match(messages.at(-2)?.content ?? '', /You have reached the maximum context length you can handle\./);
  assert.match(messages.at(-1)?.content ?? '', /<answer>The answer is above\.<\/answer>/);
  const finalPrompt = await serverTokens(messages.slice(0, -1));
  assert.ok(finalPrompt < CONTEXT_SIZE, `the final answer's prompt is ${finalPrompt} tokens`);

  // The long last observation went into the context (the loop's compression took it in): the
  // final answer's prompt was compressed until it fit, the observation stubbed, the request last.
  const final = result.details.compressions.at(-1);
  assert.equal(final?.atModelCall, result.iterations);
  assert.equal(final?.stubbedObservations, 1);
  assert.ok(
    (final?.contextTokensAfter ?? Number.POSITIVE_INFINITY) <= FINAL_PROMPT_LIMIT,
    `${final?.contextTokensAfter} tokens after compression`,
  );
  assert.match(
    messages.at(-2)?.content ?? '',
    /^<tool_response>\n\[Observation omitted to save context: 2,5\d\d characters beginning "Facts about BYD/,
  );
});
