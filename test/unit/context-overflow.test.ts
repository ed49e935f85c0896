import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import OpenAI from 'openai';
import { isContextOverflow } from '../../activities/model/context-overflow';
import { classifyModelError } from '../../activities/model/openai-errors';
import { FailureTypes } from '../../src/core/failure-types';
import {
  CONTEXT_OVERFLOW_RESPONSES,
  OTHER_REJECTIONS,
  type ServerErrorResponse,
} from '../fakes/model-server-error-bodies';

const ENDPOINT = { baseUrl: 'http://localhost:8080/v1', model: 'local-model' };

/** The error the openai client throws for this response (it passes the parsed body to APIError.generate). */
function clientError(response: ServerErrorResponse) {
  return OpenAI.APIError.generate(
    response.status,
    response.body as Record<string, unknown>,
    undefined,
    new Headers({ 'content-type': 'application/json' }),
  );
}

describe('context-length refusals of each server family (real bodies, see test/fakes/model-server-error-bodies.ts)', () => {
  test.each(CONTEXT_OVERFLOW_RESPONSES.map((response) => [response.server, response] as const))(
    '%s → ContextLengthExceeded, not retried',
    (_server, response) => {
      const failure = classifyModelError(clientError(response), ENDPOINT);
      assert.equal(failure.type, FailureTypes.modelContextLengthExceeded, `${response.server}: ${failure.message}`);
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, /did not fit the model's context window/);
    },
  );

  test.each(OTHER_REJECTIONS.map((response) => [response.server, response] as const))(
    '%s: a 4xx about something else stays RequestRejected',
    (_server, response) => {
      const failure = classifyModelError(clientError(response), ENDPOINT);
      assert.equal(failure.type, FailureTypes.modelRequestRejected, failure.message);
    },
  );
});

describe('isContextOverflow: structured fields first, message second', () => {
  test("llama-server's type alone is enough, whatever the message says", () => {
    assert.equal(
      isContextOverflow({ status: 400, code: 400, type: 'exceed_context_size_error', message: '400 something new' }),
      true,
    );
  });

  test("OpenAI's code alone is enough", () => {
    assert.equal(
      isContextOverflow({
        status: 400,
        code: 'context_length_exceeded',
        type: 'invalid_request_error',
        message: '400 Too long.',
      }),
      true,
    );
  });

  test('a numeric code (vLLM and llama-server send the HTTP status there) is not taken for a reason', () => {
    assert.equal(
      isContextOverflow({ status: 400, code: 400, type: 'BadRequestError', message: '400 Invalid tool_choice' }),
      false,
    );
  });

  test('an overflow wording on a 5xx is a server error, not an overflow', () => {
    assert.equal(
      isContextOverflow({
        status: 500,
        type: 'exceed_context_size_error',
        message: '500 request (9000 tokens) exceeds the available context size (8192 tokens)',
      }),
      false,
    );
  });
});
