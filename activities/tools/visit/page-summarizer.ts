import type { ChatModel } from '../../model/chat-model';
import { chatControls } from '../../model/chat-controls';

/** What a goal-directed extraction returns (DeepResearch's extractor fields). */
export interface PageSummary {
  /** Which parts of the page bear on the goal, and why. (DeepResearch spells it `rational`.) */
  rational: string;
  /** The relevant passages, as close to the original wording as possible. */
  evidence: string;
  /** A short paragraph answering the goal from the evidence. */
  summary: string;
}

/** A page to summarise for a goal. */
export interface PageToSummarize {
  goal: string;
  url: string;
  title: string;
  markdown: string;
}

/** Cancellation and liveness for a summary that may take several model calls. */
export interface SummarizeControls {
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

/** Goal-directed extraction: turns a page into the parts that serve a goal. */
export interface PageSummarizer {
  /**
   * @throws Error when the model call fails (Temporal retries the tool); the abort reason
   *   when `controls.signal` aborts.
   */
  summarize(page: PageToSummarize, controls: SummarizeControls): Promise<PageSummary>;
}

/** Options of {@link createModelPageSummarizer}. */
export interface ModelPageSummarizerOptions {
  /** The model that extracts (activities/model/chat-model.ts). */
  chatModel: ChatModel;
  /** Model name for the extraction calls. */
  model: string;
  /**
   * Longest piece of page (in characters) sent in one call; longer pages are split on
   * paragraph boundaries, each piece extracted, and the extractions merged. Default 60,000.
   */
  maxChunkCharacters?: number;
  /** Sampling temperature of the extraction calls. Default: the server's. */
  temperature?: number;
}

/** Default for {@link ModelPageSummarizerOptions.maxChunkCharacters}. */
export const DEFAULT_MAX_CHUNK_CHARACTERS = 60_000;

const ANSWER_FORMAT =
  'Answer with one JSON object and nothing else, in this shape:\n' +
  '{"rational": "...", "evidence": "...", "summary": "..."}';

function extractionPrompt(page: PageToSummarize, content: string, part: number, parts: number): string {
  const partNote =
    parts > 1 ? `\n(This is part ${part} of ${parts} of the page; the other parts are read separately.)` : '';
  return [
    'You read a web page on behalf of a researcher and pull out what serves their goal.',
    '',
    '## Goal',
    page.goal,
    '',
    '## Page',
    `Title: ${page.title}`,
    `URL: ${page.url}${partNote}`,
    '',
    content,
    '',
    '## What to write',
    '1. "rational": which sections, figures or statements of the page bear on the goal, and why. If nothing does, say so.',
    '2. "evidence": the relevant passages copied from the page, word for word and complete: numbers, names, dates, definitions, quotations. Several paragraphs are fine; leave out nothing that matters and do not paraphrase.',
    '3. "summary": one concise paragraph that answers the goal from the evidence as far as this page allows, and says how much the page contributes.',
    '',
    ANSWER_FORMAT,
  ].join('\n');
}

function mergePrompt(page: PageToSummarize, partials: PageSummary[]): string {
  const extractions = partials
    .map(
      (partial, index) =>
        `### Extraction ${index + 1}\nrational: ${partial.rational}\nevidence:\n${partial.evidence}\nsummary: ${partial.summary}`,
    )
    .join('\n\n');
  return [
    'Several extractions were made, each from a different part of one long web page, for the same research goal. Combine them into one.',
    '',
    '## Goal',
    page.goal,
    '',
    '## Page',
    `Title: ${page.title}`,
    `URL: ${page.url}`,
    '',
    '## Extractions',
    extractions,
    '',
    '## What to write',
    '1. "rational": which parts of the page bear on the goal, and why.',
    '2. "evidence": every relevant passage from the extractions, word for word; drop duplicates and passages that do not serve the goal.',
    '3. "summary": one concise paragraph answering the goal from all the evidence.',
    '',
    ANSWER_FORMAT,
  ].join('\n');
}

/** Splits `text` into pieces of at most `limit` characters, on paragraph boundaries when possible. */
export function splitIntoChunks(text: string, limit: number): string[] {
  if (text.length <= limit) return [text];
  const chunks: string[] = [];
  let current = '';
  for (const paragraph of text.split(/\n{2,}/)) {
    const pieces: string[] = [];
    for (let start = 0; start < paragraph.length; start += limit) pieces.push(paragraph.slice(start, start + limit));
    for (const piece of pieces.length ? pieces : ['']) {
      const joined = current ? `${current}\n\n${piece}` : piece;
      if (joined.length <= limit) {
        current = joined;
      } else {
        if (current) chunks.push(current);
        current = piece;
      }
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(asText).filter(Boolean).join('\n\n');
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/**
 * Reads the model's answer as `{rational, evidence, summary}`: tolerates a `<think>` block, a
 * code fence, text around the object and the spelling `rationale`. Anything else falls back to
 * the whole answer as the summary.
 */
export function parsePageSummary(answer: string): PageSummary {
  const withoutThinking = answer.replace(/<think>[\s\S]*?<\/think>/gi, '').trim();
  const start = withoutThinking.indexOf('{');
  const end = withoutThinking.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const parsed: unknown = JSON.parse(withoutThinking.slice(start, end + 1));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const fields = parsed as Record<string, unknown>;
        if ('evidence' in fields || 'summary' in fields) {
          return {
            rational: asText(fields.rational ?? fields.rationale),
            evidence: asText(fields.evidence),
            summary: asText(fields.summary),
          };
        }
      }
    } catch {
      // fall through to the raw text
    }
  }
  return { rational: '', evidence: '', summary: withoutThinking };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Groups partial extractions into batches whose prompt stays near `limit` characters (at least two per batch). */
function batchesOf(partials: PageSummary[], limit: number): PageSummary[][] {
  const batches: PageSummary[][] = [];
  let batch: PageSummary[] = [];
  let size = 0;
  for (const partial of partials) {
    const length = partial.rational.length + partial.evidence.length + partial.summary.length + 64;
    if (batch.length >= 2 && size + length > limit) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(partial);
    size += length;
  }
  if (batch.length === 1 && batches.length)
    (batches[batches.length - 1] as PageSummary[]).push(batch[0] as PageSummary);
  else if (batch.length) batches.push(batch);
  return batches;
}

/**
 * A {@link PageSummarizer} that asks a chat model (one call per piece) for
 * `{rational, evidence, summary}` as DeepResearch's extractor does. Pages longer than
 * `maxChunkCharacters` are extracted piece by piece (heartbeating between pieces) and the
 * extractions merged by further calls. Malformed JSON falls back to the raw answer; a failed
 * model call becomes a plain Error, which Temporal retries.
 */
export function createModelPageSummarizer(options: ModelPageSummarizerOptions): PageSummarizer {
  const maxChunkCharacters = options.maxChunkCharacters ?? DEFAULT_MAX_CHUNK_CHARACTERS;
  if (!Number.isFinite(maxChunkCharacters) || maxChunkCharacters < 1000) {
    throw new RangeError(`maxChunkCharacters must be at least 1000, got ${maxChunkCharacters}`);
  }

  async function ask(prompt: string, controls: SummarizeControls, progress: unknown): Promise<PageSummary> {
    const { signal } = controls;
    if (signal.aborted) throw abortReason(signal);
    let content: string;
    try {
      const reply = await options.chatModel.chat(
        {
          model: options.model,
          messages: [{ role: 'user', content: prompt }],
          ...(options.temperature === undefined ? {} : { sampling: { temperature: options.temperature } }),
        },
        chatControls({ signal, onProgress: () => controls.heartbeat(progress) }),
      );
      content = reply.content;
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`The visit tool's page summarizer could not call the model "${options.model}": ${message}`, {
        cause: error,
      });
    }
    return parsePageSummary(content);
  }

  return {
    async summarize(page, controls) {
      const chunks = splitIntoChunks(page.markdown, maxChunkCharacters);
      let partials: PageSummary[] = [];
      for (const [index, chunk] of chunks.entries()) {
        const progress = { summarizing: page.url, part: index + 1, of: chunks.length };
        controls.heartbeat(progress);
        partials.push(await ask(extractionPrompt(page, chunk, index + 1, chunks.length), controls, progress));
      }
      while (partials.length > 1) {
        const merged: PageSummary[] = [];
        for (const batch of batchesOf(partials, maxChunkCharacters)) {
          const progress = { merging: page.url, extractions: batch.length };
          controls.heartbeat(progress);
          merged.push(await ask(mergePrompt(page, batch), controls, progress));
        }
        partials = merged;
      }
      return partials[0] as PageSummary;
    },
  };
}
