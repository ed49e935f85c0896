import { Context } from '@temporalio/activity';
import type { ChatControls, ChatModel, ChatReply, ChatRequest } from '../model/chat-model';
import { countConversationTokens, type TokenCounter } from '../token-counter';
import { settleAnsweredCall, settleFailedCall, waitForModelLimit } from './model-limit-wait';
import type { ModelLimitGate } from './shared-model-limits';

/**
 * A chat model whose every request first takes its place in its model's shared limit
 * (`REACT_AGENT_MODEL_LIMITS`, issue 33), as the model activity's calls do: the calls the agent
 * makes beside its own turns — compression's and the visit tool's summaries, the judge's verdicts —
 * spend the same provider's tokens and requests, so they book them in the same budget, wait their
 * turn (heartbeating `waitingForModelLimit` in the activity that makes them), settle with the
 * usage the provider reported, and report a 429's `retry-after` so every worker pauses. A model
 * without a limit asks nothing (`gate.reserve` answers undefined without an RPC).
 *
 * Only for calls made inside an activity (the wait heartbeats and sleeps through its context).
 * The model activity books its own calls (activities/model-activity.ts) and takes the plain model.
 */
export function withModelLimits(chatModel: ChatModel, gate: ModelLimitGate, counter: TokenCounter): ChatModel {
  return {
    async chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply> {
      const context = Context.current();
      const ticket = await waitForModelLimit(
        gate,
        {
          model: request.model,
          promptTokens: countConversationTokens(request.messages, counter),
          ...(request.sampling?.maxOutputTokens !== undefined
            ? { maxOutputTokens: request.sampling.maxOutputTokens }
            : {}),
        },
        context,
      );
      let reply: ChatReply;
      try {
        reply = await chatModel.chat(request, controls);
      } catch (error) {
        await settleFailedCall(gate, ticket, error, request.model, context);
        throw error;
      }
      await settleAnsweredCall(gate, ticket, reply.usage);
      return reply;
    },
    contextWindow: (model) => chatModel.contextWindow(model),
  };
}
