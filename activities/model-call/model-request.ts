import type { CallModelInput } from '../../src/core/activity-contracts';
import type { ChatMessage } from '../../src/core/messages';
import type { Protocol } from '../../src/core/protocols';
import type { ChatRequest, ChatTool } from '../model/chat-model';
import { MODEL_CALL_LABEL, WORKFLOW_ID_LABEL } from '../model/chat-request-labels';
import { runWorkflowId } from '../run-workflow-id';

/** Sampling the worker applies where a run sets none; no defaults here, the worker's configuration has them. */
export interface SamplingDefaults {
  /** REACT_AGENT_TEMPERATURE. */
  temperature: number;
  /** REACT_AGENT_TOP_P. */
  topP: number;
  /** Longest reply, in tokens (REACT_AGENT_MAX_OUTPUT_TOKENS). */
  maxOutputTokens: number;
}

/** A model call's input with its run's workflow id ({@link runWorkflowId}). */
export type CallModelInputOfRun = CallModelInput & { workflowId: string };

/** The input with its run's workflow id: the input's own, else the activity's ({@link runWorkflowId}). */
export function withWorkflowId(input: CallModelInput): CallModelInputOfRun {
  return { ...input, workflowId: runWorkflowId(input.workflowId) };
}

/**
 * The request of one model call: the prompt's messages, the protocol's stop sequences, the run's
 * tools under native tool calling (`none` may be called on the final-answer call), the run's
 * sampling over the worker's defaults, and the labels that name the run and the call.
 */
export function modelRequest(
  input: CallModelInputOfRun,
  protocol: Pick<Protocol, 'stop'>,
  messages: ChatMessage[],
  nativeTools: ChatTool[] | undefined,
  defaults: SamplingDefaults,
): ChatRequest {
  return {
    model: input.model.model,
    messages,
    ...(protocol.stop.length ? { stop: protocol.stop } : {}),
    ...(nativeTools ? { tools: nativeTools, toolChoice: input.finalAnswer ? 'none' : 'auto' } : {}),
    sampling: {
      temperature: input.model.temperature ?? defaults.temperature,
      topP: input.model.topP ?? defaults.topP,
      maxOutputTokens: input.model.maxOutputTokens ?? defaults.maxOutputTokens,
      ...(input.model.presencePenalty !== undefined ? { presencePenalty: input.model.presencePenalty } : {}),
    },
    labels: { [WORKFLOW_ID_LABEL]: input.workflowId, [MODEL_CALL_LABEL]: String(input.modelCall) },
  };
}
