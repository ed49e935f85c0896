/**
 * The LLM judge's prompts and the strict reading of its verdicts (workflow-safe, pure).
 *
 * A prompt is a template with placeholders, replaced everywhere they occur:
 * `{question}`, `{reference}` (alias `{correct_answer}`), `{prediction}` (alias `{response}`).
 * Your own prompt file (`--judge PATH`) uses the same placeholders and must ask for either a
 * one-word `Correct`/`Incorrect` verdict or the browsecomp JSON object; both are understood.
 */

/** The built-in judges. */
export const JUDGE_NAMES = ['gaia', 'browsecomp'] as const;
export type BuiltInJudge = (typeof JUDGE_NAMES)[number];

/** How a judge's reply is read. */
export type VerdictFormat = 'word' | 'json' | 'either';

export const GAIA_JUDGE_PROMPT = `You are grading an answer to a question against the reference answer.

Question: {question}
Reference answer: {reference}
Predicted answer: {prediction}

The predicted answer is correct when it means the same as the reference answer: the same entity,
number (allowing different but equivalent formatting and units) or list, with nothing wrong
added. It is incorrect when it differs, is incomplete, hedges between options, or says it does not know.

Reply with exactly one word: Correct or Incorrect.`;

export const BROWSECOMP_JUDGE_PROMPT = `Judge whether the following [response] to [question] is correct or not based on the precise and unambiguous [correct_answer] below.

[question]: {question}

[response]: {prediction}

[correct_answer]: {reference}

Reply with one JSON object and nothing else, with these keys:
"extracted_final_answer": the final exact answer extracted from the [response], or "None" if there is none;
"reasoning": why the extracted answer is or is not the same as [correct_answer], focusing only on meaningful differences (do not solve the problem again);
"correct": "yes" if the extracted answer matches [correct_answer] or is within a small margin of error for numerical problems, otherwise "no";
"confidence": your confidence score between 0% and 100% taken from the [response] (100% if it gives none).`;

/** The reminder sent with the second (last) attempt when a verdict could not be read. */
export function verdictReminder(format: VerdictFormat): string {
  if (format === 'word')
    return 'Your reply could not be read as a verdict. Reply with exactly one word: Correct or Incorrect.';
  if (format === 'json')
    return 'Your reply could not be read as a verdict. Reply with only the JSON object with the keys extracted_final_answer, reasoning, correct ("yes" or "no") and confidence.';
  return 'Your reply could not be read as a verdict. Reply with exactly one word, Correct or Incorrect, or with only a JSON object whose "correct" key is "yes" or "no".';
}

/** The prompt and verdict format of a built-in judge. */
export function builtInJudge(name: BuiltInJudge): { template: string; format: VerdictFormat } {
  return name === 'gaia'
    ? { template: GAIA_JUDGE_PROMPT, format: 'word' }
    : { template: BROWSECOMP_JUDGE_PROMPT, format: 'json' };
}

/** The template with its placeholders filled in. */
export function renderJudgePrompt(
  template: string,
  values: { question: string; reference: string; prediction: string },
): string {
  const replacements: Record<string, string> = {
    question: values.question,
    reference: values.reference,
    correct_answer: values.reference,
    prediction: values.prediction,
    response: values.prediction,
  };
  return template.replace(
    /\{(question|reference|correct_answer|prediction|response)\}/g,
    (_, name: string) => replacements[name] as string,
  );
}

/** A judge's verdict: correct or not, or undefined when the reply says neither clearly. */
export interface ParsedVerdict {
  isCorrect: boolean | undefined;
  /** For browsecomp: what the judge extracted and its confidence, when given. */
  extractedFinalAnswer?: string;
  confidence?: string;
  reasoning?: string;
}

const DECORATION = /[*_`#>"'“”‘’[\]()]/g;
const LABEL = /^(?:final\s+)?(?:answer|verdict|judgement|judgment|grade|result|assessment|evaluation)\s*[:：=-]\s*/i;

/**
 * Reads a one-word verdict strictly. Accepted: `Correct`, `incorrect`, decorated forms such as
 * `**Correct**`, `"Incorrect."`, `Verdict: Incorrect.`, `Judgement - correct`. Anything else is
 * unparseable — in particular a reply that merely starts with "a" or contains both words. (DeepResearch
 * counted a verdict starting with "a", such as "Answer: Incorrect", as correct.)
 */
export function parseWordVerdict(reply: string): boolean | undefined {
  const withoutThinking = reply.replace(/<think>[\s\S]*?<\/think>/g, '');
  const cleaned = withoutThinking
    .replace(DECORATION, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(LABEL, '')
    .replace(/[.!。]+$/, '')
    .trim()
    .toLowerCase();
  if (cleaned === 'correct') return true;
  if (cleaned === 'incorrect' || cleaned === 'not correct') return false;
  return undefined;
}

function yesNo(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const cleaned = value.replace(DECORATION, '').trim().toLowerCase();
  if (cleaned === 'yes' || cleaned === 'true' || cleaned === 'correct') return true;
  if (cleaned === 'no' || cleaned === 'false' || cleaned === 'incorrect') return false;
  return undefined;
}

/**
 * Reads the browsecomp verdict: a JSON object (possibly in a ```json fence or after other text)
 * whose `correct` is "yes" or "no"; failing that, BrowseComp's own text lines (`correct: yes`).
 */
export function parseJsonVerdict(reply: string): ParsedVerdict {
  const text = reply.replace(/<think>[\s\S]*?<\/think>/g, '');
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const parsed = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
      if (parsed && typeof parsed === 'object') {
        const isCorrect = yesNo(parsed.correct);
        return {
          isCorrect,
          ...(typeof parsed.extracted_final_answer === 'string'
            ? { extractedFinalAnswer: parsed.extracted_final_answer }
            : {}),
          ...(parsed.confidence !== undefined ? { confidence: String(parsed.confidence) } : {}),
          ...(typeof parsed.reasoning === 'string' ? { reasoning: parsed.reasoning } : {}),
        };
      }
    } catch {
      // fall through to the text lines
    }
  }
  const lines = [...text.matchAll(/^\s*\**correct\**\s*:\s*\**\s*(yes|no)\b/gim)];
  const answers = new Set(lines.map((match) => (match[1] as string).toLowerCase()));
  return { isCorrect: answers.size === 1 ? answers.has('yes') : undefined };
}

/** Reads a reply in the given format (`either`: JSON first, then the one word). */
export function parseVerdict(reply: string, format: VerdictFormat): ParsedVerdict {
  if (format === 'word') return { isCorrect: parseWordVerdict(reply) };
  if (format === 'json') return parseJsonVerdict(reply);
  const json = parseJsonVerdict(reply);
  return json.isCorrect !== undefined ? json : { isCorrect: parseWordVerdict(reply) };
}
