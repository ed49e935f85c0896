import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { EvaluationFailureTypes } from '../../src/core/evaluation/evaluation-contract';
import { FailureTypes } from '../../src/core/failure-types';
import { maskUrlCredentials } from '../../src/domain/secret-redaction';
import { isContextOverflow } from './context-overflow';

const NON_NEGATIVE_NUMBER = /^\s*\d+(?:\.\d+)?\s*$/;

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date) into milliseconds; anything else is undefined. */
export function retryAfterMilliseconds(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && NON_NEGATIVE_NUMBER.test(milliseconds)) return Number(milliseconds);
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (NON_NEGATIVE_NUMBER.test(value)) return Number(value) * 1000;
  if (!/[A-Za-z]/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

export interface ModelEndpointDescription {
  baseUrl: string;
  model: string;
}

/**
 * Turns whatever the openai client threw into an `ApplicationFailure` with a dotted type that
 * says whether Temporal should retry. Messages name the setting to fix, and show the endpoint
 * without its credentials; what the server said is quoted as it came, and the worker's secret
 * redaction (worker/secret-redaction-interceptor.ts) takes an echoed key out of it.
 */
export function classifyModelError(error: unknown, endpoint: ModelEndpointDescription): ApplicationFailure {
  const cause = error instanceof Error ? error : new Error(String(error));
  const baseUrl = maskUrlCredentials(endpoint.baseUrl);
  if (error instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.create({
      type: FailureTypes.modelUnreachable,
      message: `The model endpoint ${baseUrl} could not be reached (${cause.message}); retrying. Check OPENAI_BASE_URL and that the server is running.`,
      cause,
    });
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    const serverMessage = error.message;
    const code = typeof error.code === 'string' ? error.code : '';
    if (isContextOverflow({ status, code: error.code, type: error.type, message: serverMessage })) {
      return ApplicationFailure.create({
        type: FailureTypes.modelContextLengthExceeded,
        message: `The request did not fit the model's context window: ${serverMessage}`,
        nonRetryable: true,
        cause,
      });
    }
    if (status === 429 && code === 'insufficient_quota') {
      return ApplicationFailure.create({
        type: FailureTypes.modelRequestRejected,
        message: `The model endpoint says the account is out of quota (429 insufficient_quota): ${serverMessage}. Check the billing of the account behind OPENAI_API_KEY.`,
        nonRetryable: true,
        cause,
      });
    }
    if (status === 429) {
      return ApplicationFailure.create({
        type: FailureTypes.modelRateLimited,
        message: `The model endpoint is rate limiting (429): ${serverMessage}`,
        nextRetryDelay: retryAfterMilliseconds(error.headers),
        cause,
      });
    }
    if (status === 408 || status === 409 || status >= 500) {
      return ApplicationFailure.create({
        type: FailureTypes.modelServerError,
        message: `The model endpoint failed with ${status}: ${serverMessage}`,
        nextRetryDelay: retryAfterMilliseconds(error.headers),
        cause,
      });
    }
    const fix =
      status === 401 || status === 403
        ? `Check OPENAI_API_KEY: the endpoint ${baseUrl} refused it.`
        : status === 404
          ? `Check REACT_AGENT_MODEL (now "${endpoint.model}") and OPENAI_BASE_URL (now ${baseUrl}, which usually ends in /v1).`
          : 'The request was rejected; retrying will not help.';
    return ApplicationFailure.create({
      type: FailureTypes.modelRequestRejected,
      message: `The model endpoint rejected the request with ${status}: ${serverMessage}. ${fix}`,
      nonRetryable: true,
      cause,
    });
  }
  return ApplicationFailure.create({
    type: FailureTypes.modelBadResponse,
    message: `The model call failed: ${cause.message}`,
    cause,
  });
}

/**
 * Turns what the openai client threw at a judge call into an ApplicationFailure: unreachable,
 * 408/409/429/5xx retry; 400/401/403/404 do not. Messages name the variable to fix.
 */
export function classifyJudgeError(error: unknown, endpoint: ModelEndpointDescription): ApplicationFailure {
  const cause = error instanceof Error ? error : new Error(String(error));
  const baseUrl = maskUrlCredentials(endpoint.baseUrl);
  if (error instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.create({
      type: EvaluationFailureTypes.judgeUnreachable,
      message: `The judge endpoint ${baseUrl} could not be reached (${cause.message}). Check REACT_AGENT_JUDGE_BASE_URL (default: OPENAI_BASE_URL) and that the server is running.`,
      cause,
    });
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    if (status === 429) {
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeRateLimited,
        message: `The judge endpoint is rate limiting (429): ${error.message}`,
        nextRetryDelay: retryAfterMilliseconds(error.headers),
        cause,
      });
    }
    if (status === 408 || status === 409 || status >= 500) {
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeServerError,
        message: `The judge endpoint ${baseUrl} failed with ${status}: ${error.message}. Check REACT_AGENT_JUDGE_BASE_URL.`,
        nextRetryDelay: retryAfterMilliseconds(error.headers),
        cause,
      });
    }
    const fix =
      status === 401 || status === 403
        ? `Check REACT_AGENT_JUDGE_API_KEY (default: OPENAI_API_KEY): ${baseUrl} refused it.`
        : status === 404
          ? `Check REACT_AGENT_JUDGE_MODEL (now "${endpoint.model}") and REACT_AGENT_JUDGE_BASE_URL (now ${baseUrl}).`
          : 'Retrying will not help.';
    return ApplicationFailure.create({
      type: EvaluationFailureTypes.judgeRejected,
      message: `The judge endpoint rejected the request with ${status}: ${error.message}. ${fix}`,
      nonRetryable: true,
      cause,
    });
  }
  return ApplicationFailure.create({
    type: EvaluationFailureTypes.judgeBadResponse,
    message: `The judge call failed: ${cause.message}`,
    cause,
  });
}
