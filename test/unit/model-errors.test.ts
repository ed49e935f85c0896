import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { classifyModelError, retryAfterMilliseconds } from '../../activities/model/openai-errors';
import { FailureTypes } from '../../src/core/failure-types';

const ENDPOINT = { baseUrl: 'http://models.internal:8000/v1', model: 'qwen-test-model' };
const SECRET = 'sk-test-SECRET-never-print-0123456789';

/** An APIError as the openai client builds it from a response: body `{ error: {...} }`. */
function apiError(
  status: number,
  error: Record<string, unknown> | undefined,
  headers: Record<string, string> = {},
): InstanceType<typeof OpenAI.APIError> {
  return OpenAI.APIError.generate(status, error ? { error } : undefined, undefined, new Headers(headers));
}

function classify(error: unknown): ApplicationFailure {
  const failure = classifyModelError(error, ENDPOINT);
  assert.ok(failure instanceof ApplicationFailure);
  return failure;
}

describe('classifyModelError', () => {
  test('the openai client builds the error subclasses these tests rely on', () => {
    assert.ok(apiError(429, { message: 'slow down' }) instanceof OpenAI.RateLimitError);
    assert.ok(apiError(401, { message: 'no' }) instanceof OpenAI.AuthenticationError);
    assert.equal(apiError(400, { message: 'bad', code: 'context_length_exceeded' }).code, 'context_length_exceeded');
  });

  test('429 with retry-after in seconds → RateLimited, retryable, next retry after the server says', () => {
    const cause = apiError(429, { message: 'Rate limit reached for requests' }, { 'retry-after': '2' });
    const failure = classify(cause);
    assert.equal(failure.type, FailureTypes.modelRateLimited);
    assert.equal(failure.type, 'ReactAgent.Model.RateLimited');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 2000);
    assert.match(failure.message, /429/);
    assert.match(failure.message, /Rate limit reached for requests/);
    assert.equal(failure.cause, cause);
  });

  test('429 with retry-after as an HTTP date → the delay until that date', () => {
    const at = new Date(Date.now() + 30_000).toUTCString(); // second precision: 29–30 s from now
    const failure = classify(apiError(429, { message: 'busy' }, { 'retry-after': at }));
    assert.equal(failure.type, FailureTypes.modelRateLimited);
    assert.equal(typeof failure.nextRetryDelay, 'number');
    const delay = failure.nextRetryDelay as number;
    assert.ok(delay > 28_000 && delay <= 30_000, `delay ${delay} should be about 30 s`);
  });

  test('429 with retry-after-ms → that many milliseconds, preferred over retry-after', () => {
    assert.equal(classify(apiError(429, { message: 'busy' }, { 'retry-after-ms': '750' })).nextRetryDelay, 750);
    assert.equal(
      classify(apiError(429, { message: 'busy' }, { 'retry-after-ms': '750', 'retry-after': '9' })).nextRetryDelay,
      750,
    );
  });

  test('429 without retry-after → no next retry delay (Temporal backoff applies)', () => {
    const failure = classify(apiError(429, { message: 'busy' }));
    assert.equal(failure.type, FailureTypes.modelRateLimited);
    assert.equal(failure.nextRetryDelay, undefined);
    assert.equal(failure.nonRetryable, false);
  });

  for (const status of [500, 502, 503, 408, 409]) {
    test(`${status} → ServerError, retryable`, () => {
      const failure = classify(apiError(status, { message: `upstream trouble ${status}` }));
      assert.equal(failure.type, FailureTypes.modelServerError);
      assert.equal(failure.type, 'ReactAgent.Model.ServerError');
      assert.equal(failure.nonRetryable, false);
      assert.match(failure.message, new RegExp(`failed with ${status}`));
      assert.match(failure.message, new RegExp(`upstream trouble ${status}`));
    });
  }

  test('503 honours retry-after too', () => {
    assert.equal(classify(apiError(503, { message: 'overloaded' }, { 'retry-after': '5' })).nextRetryDelay, 5000);
  });

  for (const status of [401, 403]) {
    test(`${status} → RequestRejected, not retryable, names OPENAI_API_KEY and never the key`, () => {
      const previous = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = SECRET;
      try {
        const failure = classify(
          apiError(status, { message: 'Invalid authentication', type: 'invalid_request_error' }),
        );
        assert.equal(failure.type, FailureTypes.modelRequestRejected);
        assert.equal(failure.nonRetryable, true);
        assert.match(failure.message, /OPENAI_API_KEY/);
        assert.match(failure.message, new RegExp(String(status)));
        assert.ok(failure.message.includes(ENDPOINT.baseUrl), 'names the endpoint that refused the key');
        assert.ok(!failure.message.includes(SECRET), 'the key must never appear in the message');
        assert.ok(!String(failure.stack).includes(SECRET), 'the key must never appear in the stack');
        assert.doesNotMatch(failure.message, /REACT_AGENT_MODEL/);
      } finally {
        if (previous === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = previous;
      }
    });
  }

  test('404 → RequestRejected, not retryable, names REACT_AGENT_MODEL with the model and base URL', () => {
    const failure = classify(apiError(404, { message: 'The model `qwen-test-model` does not exist' }));
    assert.equal(failure.type, FailureTypes.modelRequestRejected);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /REACT_AGENT_MODEL/);
    assert.match(failure.message, /"qwen-test-model"/);
    assert.match(failure.message, /OPENAI_BASE_URL/);
    assert.ok(failure.message.includes(ENDPOINT.baseUrl));
    assert.doesNotMatch(failure.message, /OPENAI_API_KEY/);
  });

  test('400 with code context_length_exceeded → ContextLengthExceeded, not retryable', () => {
    const failure = classify(
      apiError(400, { message: 'Too long.', type: 'invalid_request_error', code: 'context_length_exceeded' }),
    );
    assert.equal(failure.type, FailureTypes.modelContextLengthExceeded);
    assert.equal(failure.type, 'ReactAgent.Model.ContextLengthExceeded');
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /context window/);
    assert.match(failure.message, /Too long\./);
  });

  test('400 whose message says "maximum context length" (no code) → ContextLengthExceeded', () => {
    const message = "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.";
    const failure = classify(apiError(400, { message, type: 'BadRequestError', code: null }));
    assert.equal(failure.type, FailureTypes.modelContextLengthExceeded);
    assert.equal(failure.nonRetryable, true);
  });

  test('a context-length message on another status is not taken for one', () => {
    const failure = classify(apiError(500, { message: 'maximum context length exceeded while warming up' }));
    assert.equal(failure.type, FailureTypes.modelServerError);
  });

  test('plain 400 → RequestRejected, not retryable, says retrying will not help', () => {
    const failure = classify(apiError(400, { message: "Invalid value for 'temperature'", code: 'invalid_value' }));
    assert.equal(failure.type, FailureTypes.modelRequestRejected);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /rejected the request with 400/);
    assert.match(failure.message, /retrying will not help/);
  });

  test('connection error → Unreachable, retryable, names OPENAI_BASE_URL and the endpoint', () => {
    const cause = new OpenAI.APIConnectionError({
      message: 'Connection error.',
      cause: new Error('connect ECONNREFUSED 127.0.0.1:8000'),
    });
    const failure = classify(cause);
    assert.equal(failure.type, FailureTypes.modelUnreachable);
    assert.equal(failure.type, 'ReactAgent.Model.Unreachable');
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /OPENAI_BASE_URL/);
    assert.ok(failure.message.includes(ENDPOINT.baseUrl));
    assert.match(failure.message, /Connection error\./);
    assert.equal(failure.cause, cause);
  });

  test('connection timeout (a subclass) → Unreachable as well', () => {
    assert.equal(classify(new OpenAI.APIConnectionTimeoutError()).type, FailureTypes.modelUnreachable);
  });

  test('APIError.generate without headers yields a connection error, classified Unreachable', () => {
    assert.equal(
      classify(OpenAI.APIError.generate(undefined, new Error('socket hang up'), 'Connection error.', undefined)).type,
      FailureTypes.modelUnreachable,
    );
  });

  test('anything else → BadResponse, retryable, keeping the message', () => {
    const fromError = classify(new SyntaxError('Unexpected token < in JSON'));
    assert.equal(fromError.type, FailureTypes.modelBadResponse);
    assert.equal(fromError.nonRetryable, false);
    assert.match(fromError.message, /Unexpected token < in JSON/);
    const fromString = classify('weird thing thrown');
    assert.equal(fromString.type, FailureTypes.modelBadResponse);
    assert.match(fromString.message, /weird thing thrown/);
    assert.ok(fromString.cause instanceof Error);
  });
});

describe('retryAfterMilliseconds', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const headers = (values: Record<string, string>) => new Headers(values);

  test('no headers or neither header → undefined', () => {
    assert.equal(retryAfterMilliseconds(undefined, now), undefined);
    assert.equal(retryAfterMilliseconds(headers({}), now), undefined);
    assert.equal(retryAfterMilliseconds(headers({ 'x-other': '5' }), now), undefined);
  });

  test('seconds, including fractions and zero', () => {
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': '2' }), now), 2000);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': '1.5' }), now), 1500);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': '0' }), now), 0);
  });

  test('HTTP date: time until then, 0 when already past', () => {
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now), 30_000);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now), 0);
  });

  test('retry-after-ms wins over retry-after', () => {
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after-ms': '250', 'retry-after': '3' }), now), 250);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after-ms': '0', 'retry-after': '3' }), now), 0);
  });

  test('an unreadable or negative retry-after-ms falls back to retry-after', () => {
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after-ms': 'soon', 'retry-after': '3' }), now), 3000);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after-ms': '-5', 'retry-after': '3' }), now), 3000);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after-ms': 'soon' }), now), undefined);
  });

  test('an unreadable retry-after → undefined', () => {
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': 'soon' }), now), undefined);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': '12abc' }), now), undefined);
    assert.equal(retryAfterMilliseconds(headers({ 'retry-after': 'Infinity' }), now), undefined);
  });
});
