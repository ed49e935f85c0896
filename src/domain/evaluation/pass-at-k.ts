/**
 * Pass@k maths over unique questions (pure). `correctness[q][r]` says whether
 * rollout r (0-based) answered question q correctly; every question has one entry per rollout
 * (a question a rollout has no line for counts as not correct there).
 */

/** pass@1 of each rollout: the share of the unique questions it answered correctly. */
export function passAt1PerRollout(correctness: boolean[][], rollouts: number): number[] {
  const questions = correctness.length;
  return Array.from({ length: rollouts }, (_, rollout) =>
    questions === 0 ? 0 : correctness.filter((row) => row[rollout] === true).length / questions,
  );
}

/** The mean of the rollouts' pass@1 (DeepResearch's "Avg. Pass@k"; not pass@k). */
export function meanPassAt1(perRollout: number[]): number {
  return perRollout.length === 0 ? 0 : perRollout.reduce((sum, value) => sum + value, 0) / perRollout.length;
}

/** The rollout with the highest pass@1 (1-based; the first on a tie). */
export function bestRollout(perRollout: number[]): { rollout: number; passAt1: number } {
  let best = { rollout: 1, passAt1: perRollout[0] ?? 0 };
  perRollout.forEach((value, index) => {
    if (value > best.passAt1) best = { rollout: index + 1, passAt1: value };
  });
  return best;
}

/** pass@k with k = all rollouts: the share of questions at least one rollout answered correctly. */
export function passAtAny(correctness: boolean[][]): number {
  return correctness.length === 0 ? 0 : correctness.filter((row) => row.some(Boolean)).length / correctness.length;
}

/**
 * The unbiased estimator of pass@k for one question (Chen et al. 2021): with n samples of which
 * c are correct, 1 - C(n-c, k) / C(n, k), computed as a product to stay exact for large n.
 */
export function unbiasedPassAtKForQuestion(samples: number, correct: number, k: number): number {
  if (k < 1 || k > samples) throw new RangeError(`k must be from 1 to ${samples}, got ${k}`);
  if (samples - correct < k) return 1;
  let allWrong = 1;
  for (let index = samples - correct + 1; index <= samples; index += 1) allWrong *= 1 - k / index;
  return 1 - allWrong;
}

/** The unbiased pass@k estimator averaged over questions, for k = 1 … rollouts (key: k). */
export function unbiasedPassAtK(correctness: boolean[][], rollouts: number): Record<string, number> {
  const estimates: Record<string, number> = {};
  for (let k = 1; k <= rollouts; k += 1) {
    estimates[String(k)] =
      correctness.length === 0
        ? 0
        : correctness.reduce(
            (sum, row) => sum + unbiasedPassAtKForQuestion(rollouts, row.filter(Boolean).length, k),
            0,
          ) / correctness.length;
  }
  return estimates;
}
