import type { RunProgress } from '../../workflows/definitions';

function clock(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Turns successive `progress` query answers into the lines `run` and `follow` print. */
export class ProgressLines {
  private lastThought = '';
  private lastCalls = -1;
  private lastTools = '';

  next(progress: RunProgress): string[] {
    const lines: string[] = [];
    const head = `[call ${progress.modelCalls}/${progress.maxModelCalls} · ${progress.contextTokens.toLocaleString('en-US')} tokens · ${clock(progress.elapsedMs)}]`;
    if (progress.modelCalls !== this.lastCalls && progress.phase === 'calling_model') {
      lines.push(`${head} calling the model`);
    }
    if (progress.lastThought && progress.lastThought !== this.lastThought) {
      lines.push(`${head} thought: ${progress.lastThought.replace(/\s+/g, ' ').slice(0, 160)}`);
    }
    const tools = progress.openToolCalls.join(', ');
    if (tools && tools !== this.lastTools) lines.push(`${head} running ${tools}`);
    this.lastCalls = progress.modelCalls;
    this.lastThought = progress.lastThought;
    this.lastTools = tools;
    return lines;
  }
}
