import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { EvaluationFailureTypes } from '../../src/core/evaluation/evaluation-contract';
import { FailureTypes } from '../../src/core/failure-types';
import { maskUrlCredentials } from '../../src/domain/secret-redaction';
import { isContextOverflow } from './context-overflow';
import { retryAfterMilliseconds, type ModelEndpointDescription } from './openai-errors';

/**
 * What the Anthropic client threw, as the same `ApplicationFailure`s the OpenAI-compatible model
 * throws (issue 31): by HTTP status, or — for an `error` event in the middle of a stream, which has
 * none — by Anthropic's error type. `overloaded_error` (529) and `api_error` are server errors,
 * retried after `retry-after` when the server says it; `rate_limit_error` (429) is a rate limit;
 * authentication, permission and billing errors are not retried; "prompt is too long" is the
 * context overflow the loop turns into its final answer.
 */

type Kind = 'unreachable' | 'overflow' | 'rate-limited' | 'server' | 'auth' | 'not-found' | 'rejected' | 'bad';

const TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

interface Classified {
  kind: Kind;
  cause: Error;
  /** Status, and the error's type when the body gives one: `529 overloaded_error`. */
  said: string;
  serverMessage: string;
  retryAfterMs: number | undefined;
}

function classify(error: unknown): Classified {
  const cause = error instanceof Error ? error : new Error(String(error));
  const base = { cause, said: '', serverMessage: cause.message, retryAfterMs: undefined };
  if (error instanceof Anthropic.APIConnectionError) return { ...base, kind: 'unreachable' };
  if (!(error instanceof Anthropic.APIError)) return { ...base, kind: 'bad' };
  const type = typeof error.type === 'string' ? error.type : '';
  const status = typeof error.status === 'number' ? error.status : TYPE_STATUS[type];
  const serverMessage = error.apiMessage ?? error.message;
  const said = [error.status ?? '', type].filter(Boolean).join(' ');
  const retryAfterMs = retryAfterMilliseconds(error.headers);
  const classified = { cause, said, serverMessage, retryAfterMs };
  if (status === undefined) return { ...classified, kind: 'bad' };
  if (isContextOverflow({ status, type, message: serverMessage })) return { ...classified, kind: 'overflow' };
  if (status === 429) return { ...classified, kind: 'rate-limited' };
  if (status === 408 || status === 409 || status >= 500) return { ...classified, kind: 'server' };
  if (status === 401 || status === 402 || status === 403) return { ...classified, kind: 'auth' };
  if (status === 404) return { ...classified, kind: 'not-found' };
  return { ...classified, kind: 'rejected' };
}

/** What the Anthropic client threw at a model call, as a `ReactAgent.Model.*` failure naming the setting to fix. */
export function classifyAnthropicError(error: unknown, endpoint: ModelEndpointDescription): ApplicationFailure {
  const { kind, cause, said, serverMessage, retryAfterMs } = classify(error);
  const baseUrl = maskUrlCredentials(endpoint.baseUrl);
  switch (kind) {
    case 'unreachable':
      return ApplicationFailure.create({
        type: FailureTypes.modelUnreachable,
        message: `The model endpoint ${baseUrl} could not be reached (${cause.message}); retrying. Check ANTHROPIC_BASE_URL and that the server is running.`,
        cause,
      });
    case 'overflow':
      return ApplicationFailure.create({
        type: FailureTypes.modelContextLengthExceeded,
        message: `The request did not fit the model's context window: ${serverMessage}`,
        nonRetryable: true,
        cause,
      });
    case 'rate-limited':
      return ApplicationFailure.create({
        type: FailureTypes.modelRateLimited,
        message: `The model endpoint is rate limiting (${said}): ${serverMessage}`,
        nextRetryDelay: retryAfterMs,
        cause,
      });
    case 'server':
      return ApplicationFailure.create({
        type: FailureTypes.modelServerError,
        message: `The model endpoint failed with ${said}: ${serverMessage}`,
        nextRetryDelay: retryAfterMs,
        cause,
      });
    case 'auth':
    case 'not-found':
    case 'rejected': {
      const fix =
        kind === 'auth'
          ? `Check ANTHROPIC_API_KEY (and the account's billing): the endpoint ${baseUrl} refused it.`
          : kind === 'not-found'
            ? `Check REACT_AGENT_MODEL (now "${endpoint.model}") and ANTHROPIC_BASE_URL (now ${baseUrl}, without /v1).`
            : 'The request was rejected; retrying will not help.';
      return ApplicationFailure.create({
        type: FailureTypes.modelRequestRejected,
        message: `The model endpoint rejected the request with ${said}: ${serverMessage}. ${fix}`,
        nonRetryable: true,
        cause,
      });
    }
    default:
      return ApplicationFailure.create({
        type: FailureTypes.modelBadResponse,
        message: `The model call failed: ${cause.message}`,
        cause,
      });
  }
}

/** What the Anthropic client threw at a judge call, as a `ReactAgent.Judge.*` failure. */
export function classifyAnthropicJudgeError(error: unknown, endpoint: ModelEndpointDescription): ApplicationFailure {
  const { kind, cause, said, serverMessage, retryAfterMs } = classify(error);
  const baseUrl = maskUrlCredentials(endpoint.baseUrl);
  switch (kind) {
    case 'unreachable':
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeUnreachable,
        message: `The judge endpoint ${baseUrl} could not be reached (${cause.message}). Check REACT_AGENT_JUDGE_BASE_URL (default: ANTHROPIC_BASE_URL) and that the server is running.`,
        cause,
      });
    case 'rate-limited':
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeRateLimited,
        message: `The judge endpoint is rate limiting (${said}): ${serverMessage}`,
        nextRetryDelay: retryAfterMs,
        cause,
      });
    case 'server':
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeServerError,
        message: `The judge endpoint ${baseUrl} failed with ${said}: ${serverMessage}. Check REACT_AGENT_JUDGE_BASE_URL.`,
        nextRetryDelay: retryAfterMs,
        cause,
      });
    case 'bad':
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeBadResponse,
        message: `The judge call failed: ${cause.message}`,
        cause,
      });
    default: {
      const fix =
        kind === 'auth'
          ? `Check REACT_AGENT_JUDGE_API_KEY (default: ANTHROPIC_API_KEY): ${baseUrl} refused it.`
          : kind === 'not-found'
            ? `Check REACT_AGENT_JUDGE_MODEL (now "${endpoint.model}") and REACT_AGENT_JUDGE_BASE_URL (now ${baseUrl}).`
            : 'Retrying will not help.';
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeRejected,
        message: `The judge endpoint rejected the request with ${said}: ${serverMessage}. ${fix}`,
        nonRetryable: true,
        cause,
      });
    }
  }
}
