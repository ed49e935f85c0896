import { createHash } from 'node:crypto';
import { LocalDirectoryOutput, type OutputLocation } from './output-location';

/**
 * Judge verdicts kept by key, so re-running an evaluation makes no judge call (evaluation is cheap
 * to re-run; docs/architecture.md). The key is the SHA-256 of (judge prompt template, judge model, question, reference,
 * prediction); a verdict is written once its judge call ended, atomically.
 */
export interface StoredVerdict {
  isCorrect: boolean;
  /** The judge's last reply. */
  judgement: string;
  /** The reply could not be read even after the reminder (counted as not correct). */
  unparsed?: boolean;
  /** Judge calls it took (1, or 2 with the reminder). */
  calls: number;
  model: string;
  extractedFinalAnswer?: string;
  confidence?: string;
}

export interface VerdictStore {
  get(key: string): Promise<StoredVerdict | undefined>;
  put(key: string, verdict: StoredVerdict): Promise<void>;
}

/** The verdict key: `sha256:` + hex of the five parts. */
export function verdictKey(parts: {
  prompt: string;
  model: string;
  question: string;
  reference: string;
  prediction: string;
}): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([parts.prompt, parts.model, parts.question, parts.reference, parts.prediction]))
    .digest('hex');
  return `sha256:${hash}`;
}

/** SHA-256 of a judge prompt template, for the report. */
export function promptHash(template: string): string {
  return `sha256:${createHash('sha256').update(template).digest('hex')}`;
}

/**
 * Verdicts as files `<location>/<first two hex digits>/<hex>.json` in an output location: a
 * local directory (`$REACT_AGENT_DATA_DIR/verdicts` on the worker) or, when the transcripts are
 * in S3, `<REACT_AGENT_TRANSCRIPT_STORE>/verdicts`, so workers on several machines share them.
 */
export class OutputLocationVerdictStore implements VerdictStore {
  constructor(readonly location: OutputLocation) {}

  private pathOf(key: string): string {
    const hex = key.replace(/^sha256:/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`Not a verdict key: ${key}`);
    return `${hex.slice(0, 2)}/${hex}.json`;
  }

  async get(key: string): Promise<StoredVerdict | undefined> {
    const text = await this.location.readText(this.pathOf(key));
    return text === undefined ? undefined : (JSON.parse(text) as StoredVerdict);
  }

  async put(key: string, verdict: StoredVerdict): Promise<void> {
    await this.location.writeText(this.pathOf(key), `${JSON.stringify(verdict)}\n`);
  }
}

/** Verdicts under a local directory. */
export class LocalDirectoryVerdictStore extends OutputLocationVerdictStore {
  constructor(readonly directory: string) {
    super(new LocalDirectoryOutput(directory));
  }
}
