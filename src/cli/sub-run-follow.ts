import type { ResearchRunResult } from '../core/run-result';
import { preview } from '../core/text';
import type { SubRunEvent } from './sub-run-events';
import { subRunLabel } from './sub-run-summary';

/** The run `follow` was asked for, whose sub-runs (at any depth) are followed with it. */
export interface FollowedTree {
  /** The workflow id `follow` was given: sub-runs are labelled by their id below it. */
  rootId: string;
  /** Where the root run's lines go; a sub-run's go here too, prefixed with its label. */
  print: (line: string) => void;
}

/** Follows one sub-run with its lines already prefixed; resolves to its result, rejects as `followRun` does. */
export type FollowSubRun = (workflowId: string, print: (line: string) => void) => Promise<ResearchRunResult>;

/** How a followed sub-run ended, in one line. */
export type EndedLine = (result: ResearchRunResult) => string;

/** Why a sub-run's follow stopped without its result, in a few words. */
const stoppedWith = (error: unknown): string => {
  const status = (error as { status?: unknown } | null)?.status;
  if (error instanceof Error && error.name === 'RunEndedWithoutResultError' && typeof status === 'string')
    return `ended without a result (${status})`;
  return `not followed further: ${preview(error instanceof Error ? error.message : String(error), 160)}`;
};

/**
 * The sub-runs of one followed run (issue 30): each one its history says started is followed at
 * once, beside the run, its lines printed as `  [sub-2-1] …` (its id below the followed run's);
 * when the run's history says it closed, the run's own lines wait until its sub-run's have all
 * been printed, so a finished tree reads in order. Its sub-runs' sub-runs are followed the same way.
 */
export class SubRunFollowers {
  private readonly following = new Map<string, Promise<void>>();

  constructor(
    private readonly tree: FollowedTree,
    private readonly follow: FollowSubRun,
    private readonly endedLine: EndedLine,
  ) {}

  /** Acts on a sub-run event of the run; resolves when the run's next lines may be printed. */
  async read(event: SubRunEvent): Promise<void> {
    const label = subRunLabel(event.workflowId, this.tree.rootId);
    const say = (line: string) => this.tree.print(`  [${label}] ${line}`);
    switch (event.kind) {
      case 'sub_run_started': {
        // Its task's question is the first paragraph; the lead's question follows it.
        say(`started: ${preview(event.question.split('\n\n')[0] ?? '', 140)}`);
        if (this.following.has(event.workflowId)) return;
        this.following.set(
          event.workflowId,
          this.follow(event.workflowId, say).then(
            (result) => say(`ended: ${this.endedLine(result)}`),
            (error: unknown) => say(stoppedWith(error)),
          ),
        );
        return;
      }
      case 'sub_run_not_started':
        say(`not started: ${event.cause}`);
        return;
      case 'sub_run_closed': {
        const followed = this.following.get(event.workflowId);
        if (followed) await followed;
        else say(`ended: ${event.status}`);
        return;
      }
    }
  }

  /** Resolves once every sub-run followed has been followed to its end (or given up on). */
  async settled(): Promise<void> {
    await Promise.all(this.following.values());
  }
}
