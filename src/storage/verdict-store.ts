import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from './batch-output';

/**
 * Judge verdicts kept by key, so re-running an evaluation makes no judge call (DESIGN decision
 * 12). The key is the SHA-256 of (judge prompt template, judge model, question, reference,
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
export function verdictKey(parts: { prompt: string; model: string; question: string; reference: string; prediction: string }): string {
  const hash = createHash('sha256').update(JSON.stringify([parts.prompt, parts.model, parts.question, parts.reference, parts.prediction])).digest('hex');
  return `sha256:${hash}`;
}

/** SHA-256 of a judge prompt template, for the report. */
export function promptHash(template: string): string {
  return `sha256:${createHash('sha256').update(template).digest('hex')}`;
}

/** Verdicts as files `<directory>/<first two hex digits>/<hex>.json` (default `$REACT_AGENT_DATA_DIR/verdicts`). */
export class LocalDirectoryVerdictStore implements VerdictStore {
  constructor(readonly directory: string) {}

  private pathOf(key: string): string {
    const hex = key.replace(/^sha256:/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`Not a verdict key: ${key}`);
    return join(this.directory, hex.slice(0, 2), `${hex}.json`);
  }

  async get(key: string): Promise<StoredVerdict | undefined> {
    try {
      return JSON.parse(await readFile(this.pathOf(key), 'utf8')) as StoredVerdict;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async put(key: string, verdict: StoredVerdict): Promise<void> {
    await writeFileAtomically(this.pathOf(key), `${JSON.stringify(verdict)}\n`);
  }
}
