import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { forEachAtMost, type WaitUntil } from '../../src/core/task-slots';

/**
 * Workflows replay only if their commands keep their order, so `forEachAtMost` must start work
 * in exactly the steps of the loops it replaced in workflows/: the lanes of a turn's tool calls
 * (workflows/phases/tool-turn.ts before issue 29) and the hand-kept counter and `condition` of
 * an evaluation's judge activities (workflows/evaluation.ts before issue 17.4). Both run here
 * side by side in a small model of Temporal's workflow activation — jobs applied, conditions
 * checked after each job and again after the microtasks, cancellation through a scope — for a
 * few hundred generated scenarios, with probe chains of every length started by the jobs: the
 * old and the new code must log the same events between the same probes, activation by activation.
 */

/** Deterministic choices (mulberry32). */
function random(seed: number): { below: (n: number) => number; chance: (p: number) => boolean } {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { below: (n) => Math.floor(next() * n), chance: (p) => next() < p };
}

const drain = () => new Promise((resolve) => setImmediate(resolve));

/** A model of the workflow sandbox: a log of commands, conditions, a cancellable scope, activities. */
class Activation {
  readonly log: string[] = [];
  private readonly blocked = new Map<number, { ready: () => boolean; resolve: () => void }>();
  private sequence = 0;
  private cancelled = false;
  private rejectCancel!: (error: Error) => void;
  private readonly cancelRequested = new Promise<never>((_, reject) => (this.rejectCancel = reject));
  private readonly open = new Map<string, { resolve: (value: string) => void; reject: (error: Error) => void }>();

  constructor() {
    this.cancelRequested.catch(() => undefined);
  }

  /** `condition` as @temporalio/workflow has it: checked at once, else where the activation checks conditions. */
  readonly condition: WaitUntil = (ready) =>
    new Promise<void>((resolve, reject) => {
      if (this.cancelled) {
        void this.cancelRequested.catch(reject);
        return;
      }
      const sequence = this.sequence++;
      void this.cancelRequested.catch((error: Error) => {
        this.blocked.delete(sequence);
        reject(error);
      });
      if (ready()) resolve();
      else this.blocked.set(sequence, { ready, resolve });
    });

  /** An activity: a schedule command, a cancel request command when its scope is cancelled while it runs. */
  activity(name: string): Promise<string> {
    if (this.cancelled) return this.cancelRequested;
    this.log.push(`schedule ${name}`);
    return new Promise((resolve, reject) => {
      this.open.set(name, { resolve, reject });
      void this.cancelRequested.catch(() => {
        if (this.open.has(name)) this.log.push(`request cancel ${name}`);
      });
    });
  }

  running(): string[] {
    return [...this.open.keys()];
  }

  /** One activation: its jobs in order, conditions checked after each, then microtasks and conditions until quiet. */
  async activate(jobs: Array<() => void>, probes: number): Promise<void> {
    this.log.push('-- activation');
    for (const job of jobs) {
      job();
      this.startProbes(probes);
      this.unblock();
    }
    for (;;) {
      await drain();
      if (this.unblock() === 0) break;
    }
  }

  resolve(name: string): () => void {
    return () => {
      this.open.get(name)?.resolve(`${name} done`);
      this.open.delete(name);
    };
  }

  reject(name: string): () => void {
    return () => {
      this.open.get(name)?.reject(new Error(`${name} failed`));
      this.open.delete(name);
    };
  }

  cancel(): () => void {
    return () => {
      this.cancelled = true;
      this.rejectCancel(new Error('cancelled'));
    };
  }

  private unblock(): number {
    let unblocked = 0;
    for (;;) {
      const before = unblocked;
      for (const [sequence, entry] of this.blocked) {
        if (!entry.ready()) continue;
        this.blocked.delete(sequence);
        entry.resolve();
        unblocked += 1;
      }
      if (before === unblocked) return unblocked;
    }
  }

  /** Chains of 1 to `count` steps, each logging where it ends, so the log says at which step every event happened. */
  private startProbes(count: number): void {
    const probe = this.log.length;
    for (let steps = 1; steps <= count; steps += 1) {
      let chain: Promise<void> = Promise.resolve();
      for (let step = 1; step < steps; step += 1) chain = chain.then(() => undefined);
      void chain.then(() => this.log.push(`probe ${probe}+${steps}`));
    }
  }
}

/**
 * A turn's calls: answered at once (a problem, an unknown tool), after an approval (a condition),
 * or by an activity. As in runToolCall, a failed activity is an observation; only a cancellation
 * fails the call.
 */
type CallKind = 'note' | 'approval' | 'activity';

interface Turn {
  calls: Array<{ id: string; kind: CallKind }>;
  limit: number;
}

/** One call as runToolCall runs it, returning its observation (old) or storing it (new). */
async function observation(workflow: Activation, approvals: Set<string>, call: Turn['calls'][number]): Promise<string> {
  if (call.kind === 'note') return `${call.id} note`;
  if (call.kind === 'approval') {
    await workflow.condition(() => approvals.has(call.id));
    await Promise.resolve(); // awaitApproval's finally
  }
  try {
    return `${call.id}: ${await workflow.activity(call.id)}`;
  } catch (error) {
    if ((error as Error).message === 'cancelled') throw error;
    return `${call.id}: ${(error as Error).message}`;
  }
}

/** The lanes the turn had (workflows/phases/tool-turn.ts, runCalls, before issue 29). */
async function lanesTurn(workflow: Activation, approvals: Set<string>, turn: Turn, results: Map<string, string>) {
  async function runCalls(): Promise<void> {
    let next = 0;
    const lanes = Array.from({ length: Math.min(turn.limit, turn.calls.length) }, async () => {
      while (next < turn.calls.length) {
        const call = turn.calls[next++] as Turn['calls'][number];
        workflow.log.push(`start ${call.id}`);
        results.set(call.id, await observation(workflow, approvals, call));
      }
    });
    const settled = await Promise.allSettled(lanes);
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }
  await runCalls();
}

/** The turn on forEachAtMost, each call storing its observation where it returned it before. */
async function slotsTurn(workflow: Activation, approvals: Set<string>, turn: Turn, results: Map<string, string>) {
  async function runCall(call: Turn['calls'][number]): Promise<void> {
    workflow.log.push(`start ${call.id}`);
    if (call.kind === 'note') {
      results.set(call.id, `${call.id} note`);
      return;
    }
    if (call.kind === 'approval') {
      await workflow.condition(() => approvals.has(call.id));
      await Promise.resolve();
    }
    try {
      results.set(call.id, `${call.id}: ${await workflow.activity(call.id)}`);
    } catch (error) {
      if ((error as Error).message === 'cancelled') throw error;
      results.set(call.id, `${call.id}: ${(error as Error).message}`);
    }
  }
  async function runCalls(): Promise<void> {
    await forEachAtMost(turn.calls, turn.limit, runCall, { othersGoOn: true });
  }
  await runCalls();
}

type Run = (workflow: Activation, approvals: Set<string>, results: Map<string, string>) => Promise<void>;

/** Plays a turn with activations chosen from what is running, the same choices for the same state. */
async function playTurn(seed: number, run: Run): Promise<{ log: string[]; results: Array<[string, string]> }> {
  const choose = random(seed);
  const workflow = new Activation();
  const approvals = new Set<string>();
  const results = new Map<string, string>();
  let ended = false;
  await workflow.activate(
    [
      () =>
        void run(workflow, approvals, results).then(
          () => {
            ended = true;
            workflow.log.push('turn over');
          },
          (error: Error) => {
            ended = true;
            workflow.log.push(`turn failed: ${error.message}`);
          },
        ),
    ],
    choose.below(12),
  );
  for (let activation = 0; activation < 40 && !ended; activation += 1) {
    const jobs: Array<() => void> = [];
    const running = workflow.running();
    const waiting = [...workflow.log.join('\n').matchAll(/start (a\d+)/g)]
      .map((match) => match[1] as string)
      .filter((id) => !approvals.has(id));
    if (waiting.length && choose.chance(0.5)) {
      const id = waiting[choose.below(waiting.length)] as string;
      jobs.push(() => approvals.add(id));
    }
    if (choose.chance(0.08)) jobs.push(workflow.cancel());
    for (const id of running) {
      if (choose.chance(0.4)) jobs.push(choose.chance(0.15) ? workflow.reject(id) : workflow.resolve(id));
    }
    if (!jobs.length && running.length) jobs.push(workflow.resolve(running[0] as string));
    if (!jobs.length) jobs.push(() => undefined);
    await workflow.activate(jobs, choose.below(12));
  }
  return { log: workflow.log, results: [...results] };
}

function turnOf(seed: number): Turn {
  const choose = random(seed * 7 + 1);
  const kinds: CallKind[] = ['note', 'approval', 'activity', 'activity'];
  const count = 1 + choose.below(8);
  return {
    limit: 1 + choose.below(4),
    calls: Array.from({ length: count }, (_, index) => {
      const kind = kinds[choose.below(kinds.length)] as CallKind;
      return { id: `${kind === 'approval' ? 'a' : 'c'}${index}`, kind };
    }),
  };
}

/** Judges ranges of runs as the evaluation did with its hand-kept counter (workflows/evaluation.ts before issue 17.4). */
async function counterEvaluation(workflow: Activation, ranges: number, limit: number): Promise<void> {
  let running = 0;
  let failure: unknown;
  const pending: Promise<void>[] = [];
  for (let from = 0; from < ranges; from += 1) {
    await workflow.condition(() => running < limit || failure !== undefined);
    if (failure !== undefined) break;
    running += 1;
    pending.push(
      workflow
        .activity(`j${from}`)
        .then(() => undefined)
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => {
          running -= 1;
        }),
    );
  }
  await Promise.all(pending);
  if (failure !== undefined) throw failure;
}

/** The same on forEachAtMost through `condition`. */
async function slotsEvaluation(workflow: Activation, ranges: number, limit: number): Promise<void> {
  const from = Array.from({ length: ranges }, (_, index) => index);
  await forEachAtMost(from, limit, (index) => workflow.activity(`j${index}`).then(() => undefined), {
    waitUntil: workflow.condition,
  });
}

async function playEvaluation(seed: number, run: typeof counterEvaluation): Promise<string[]> {
  const choose = random(seed);
  const ranges = choose.below(9);
  const limit = 1 + choose.below(4);
  const workflow = new Activation();
  let ended = false;
  await workflow.activate(
    [
      () =>
        void run(workflow, ranges, limit).then(
          () => {
            ended = true;
            workflow.log.push('evaluation over');
          },
          (error: Error) => {
            ended = true;
            workflow.log.push(`evaluation failed: ${error.message}`);
          },
        ),
    ],
    choose.below(12),
  );
  for (let activation = 0; activation < 40 && !ended; activation += 1) {
    const running = workflow.running();
    const jobs: Array<() => void> = [];
    if (choose.chance(0.06)) jobs.push(workflow.cancel());
    for (const id of running) {
      if (choose.chance(0.5)) jobs.push(choose.chance(0.1) ? workflow.reject(id) : workflow.resolve(id));
    }
    // A cancelled activity is reported cancelled in a later activation.
    if (!jobs.length) jobs.push(...running.map((id) => workflow.reject(id)));
    if (!jobs.length) jobs.push(() => undefined);
    await workflow.activate(jobs, choose.below(12));
  }
  return workflow.log;
}

describe('forEachAtMost keeps the steps of the loops it replaced in workflows', () => {
  test('a turn of tool calls: the lanes’ commands, step for step, and the same observations', async () => {
    for (let seed = 1; seed <= 400; seed += 1) {
      const turn = turnOf(seed);
      const lanes = await playTurn(seed, (workflow, approvals, results) =>
        lanesTurn(workflow, approvals, turn, results),
      );
      const slots = await playTurn(seed, (workflow, approvals, results) =>
        slotsTurn(workflow, approvals, turn, results),
      );
      assert.deepEqual(slots, lanes, `seed ${seed}: ${JSON.stringify(turn)}`);
    }
  });

  // The end comes a few steps sooner: no command of an evaluation can fall in between (it has no
  // handlers or timers, and its judges are all over), so only the activation and the order count.
  test('an evaluation’s judge activities: the counter and condition’s commands, step for step', async () => {
    for (let seed = 1; seed <= 400; seed += 1) {
      const counter = await playEvaluation(seed, counterEvaluation);
      const slots = await playEvaluation(seed, slotsEvaluation);
      const steps = (log: string[]) => log.filter((line) => !line.startsWith('evaluation '));
      const commands = (log: string[]) => log.filter((line) => !line.startsWith('probe '));
      assert.deepEqual(steps(slots), steps(counter), `seed ${seed}: every judge started in the same step`);
      assert.deepEqual(commands(slots), commands(counter), `seed ${seed}: the same commands, and the same end`);
    }
  });
});
