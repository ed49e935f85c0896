import type { CompressContextInput, CompressContextOutput } from '../src/core/activity-contracts';
import {
  foldedMessages,
  planCompression,
  questionAlone,
  readQuestion,
  stubText,
  summaryDue,
  withFinalRequest,
  withSummary,
  type ObservationToStub,
} from '../src/core/compression-plan';
import type { ChatMessage } from '../src/core/messages';
import { protocolByName, type Protocol } from '../src/core/protocols';
import { totalOfCounts } from '../src/domain/message-token-counts';
import { composeMessage, loadConversation, putMessage } from '../src/storage/conversation';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { countedMessages, carriedConversationCounts, putCountedConversation } from './counted-conversation';
import { heartbeat } from './heartbeats';
import type { ChatModel } from './model/chat-model';
import { createSummaryWriter } from './summary-writer';
import { countMessageTokens, type TokenCounter } from './token-counter';

export interface CompressionDependencies {
  /** The client the summaries are asked of (activities/model/chat-model.ts): the summaries' API (`REACT_AGENT_SUMMARY_MODEL_API`), by default the run model's. */
  chatModel: ChatModel;
  /** The model that writes the summaries (`REACT_AGENT_SUMMARY_MODEL`); default each run's own model. */
  summaryModel?: string;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
}

/**
 * A message's token count: the one carried for a message loaded with the conversation (the same
 * object, not stubbed or rewritten), else counted now and kept for the next time it is asked.
 */
function countsByMessage(
  messages: ChatMessage[],
  counts: number[],
  counter: TokenCounter,
): (message: ChatMessage) => number {
  const known = new Map(messages.map((message, index) => [message, counts[index] as number]));
  return (message) => {
    const count = known.get(message) ?? countMessageTokens(message, counter);
    known.set(message, count);
    return count;
  };
}

/**
 * Context compression, carried out as `src/core/compression-plan.ts` plans it. First, observations
 * older than the last K turns become short stubs that name the stored full text (`sha256:…`), so
 * nothing is lost and a reader sees what the model saw. If that is not enough, older turns are
 * folded into an incremental summary written by the model (`summary-writer.ts`) and attached to
 * the question. For the final answer call (`finalAnswer`, issue 16) the request for the answer is
 * added last, after compressing, and counts toward the target; `dropTurns` leaves the question alone.
 */
export function createCompressContext(dependencies: CompressionDependencies) {
  const { chatModel, store, tokenCounter, summaryModel } = dependencies;
  const writeSummary = createSummaryWriter(chatModel, tokenCounter, summaryModel);

  /** The observation with the results its plan names stored whole and replaced by stubs that name them. */
  const stubbed = async (
    protocol: Protocol,
    message: ChatMessage,
    observation: ObservationToStub,
  ): Promise<ChatMessage> => {
    const results = await Promise.all(
      observation.results.map(async (result, index) =>
        observation.stubbed[index] ? stubText(result, await store.putText(result)) : result,
      ),
    );
    return protocol.withObservationResults(message, results);
  };

  return async function compressContext(input: CompressContextInput): Promise<CompressContextOutput> {
    heartbeat({ compressing: true });
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    // Token counts carried forward (issue 21): a message compression leaves as it was keeps its count.
    const carried = await carriedConversationCounts(store, input.conversation, tokenCounter);
    const added = await Promise.all(appended.map((message) => putMessage(store, message)));
    const loaded = await countedMessages(
      store,
      [...carried.references, ...added],
      [...carried.known, ...added.map(() => undefined)],
      tokenCounter,
    );
    const start = appended.length
      ? await putCountedConversation(store, loaded.references, loaded.counts, tokenCounter)
      : input.conversation;
    const countOf = countsByMessage(loaded.messages, loaded.counts, tokenCounter);
    const tokensOf = (list: ChatMessage[]) => list.reduce((sum, message) => sum + countOf(message), 0);
    const protocol = protocolByName(input.protocol);
    const plan = planCompression(loaded.messages, protocol, input);

    let messages = [...loaded.messages];
    for (const observation of plan.stubs)
      messages[observation.index] = await stubbed(protocol, messages[observation.index] as ChatMessage, observation);

    let summarizedTurns = 0;
    if (plan.dropTurns) {
      messages = questionAlone(plan, messages, start);
      summarizedTurns = plan.turns.length;
    } else if (summaryDue(plan, input, () => tokensOf(withFinalRequest(messages, input.finalAnswer)))) {
      const original = await loadConversation(store, start);
      const summary = await writeSummary(
        input,
        readQuestion(messages[1] as ChatMessage).summary,
        foldedMessages(plan, original),
      );
      if (summary) {
        messages = withSummary(plan, messages, summary, start);
        summarizedTurns = plan.oldTurns.length;
      }
    }
    messages = withFinalRequest(messages, input.finalAnswer);

    const references = await Promise.all(messages.map((message) => putMessage(store, message)));
    const counts = messages.map(countOf);
    const conversation = await putCountedConversation(store, references, counts, tokenCounter);
    return {
      conversation,
      contextTokens: totalOfCounts(counts),
      stubbedObservations: plan.stubbedResults,
      summarizedTurns,
    };
  };
}
