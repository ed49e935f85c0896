import { patched } from '@temporalio/workflow';
import { LoopPatches } from './patches';

/**
 * Whether the run's model and tool calls carry only what their activities cannot learn for
 * themselves (issue 34, marker `lean-activity-inputs`, described in workflows/patches.ts). It
 * implies `light-bookkeeping`, so a new run records this one marker.
 */
export function leanActivityInputs(): boolean {
  return patched(LoopPatches.leanActivityInputs);
}

/**
 * Whether the run keeps its bookkeeping light (issue 34, marker `light-bookkeeping`, described in
 * workflows/patches.ts): fewer activities, upserts and markers per run. Implied by
 * {@link leanActivityInputs}; a run recorded before either replays its bookkeeping as it ran.
 */
export function lightBookkeeping(): boolean {
  return leanActivityInputs() || patched(LoopPatches.lightBookkeeping);
}

/**
 * A marker of the common path, implied by `light-bookkeeping`: a run with light bookkeeping takes
 * the marked way without recording the marker (two events and a visibility write saved); a run
 * recorded before asks the marker as it did.
 */
export function patchedOrLight(patchId: string): boolean {
  return lightBookkeeping() || patched(patchId);
}
