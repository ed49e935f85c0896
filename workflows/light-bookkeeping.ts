import { patched } from '@temporalio/workflow';
import { LoopPatches } from './patches';

/**
 * Whether the run keeps its bookkeeping light (issue 34, marker `light-bookkeeping`, described in
 * workflows/patches.ts): fewer activities, upserts and markers per run. A run recorded before
 * replays its bookkeeping as it ran.
 */
export function lightBookkeeping(): boolean {
  return patched(LoopPatches.lightBookkeeping);
}

/**
 * A marker of the common path, implied by `light-bookkeeping`: a run with light bookkeeping takes
 * the marked way without recording the marker (two events and a visibility write saved); a run
 * recorded before asks the marker as it did.
 */
export function patchedOrLight(patchId: string): boolean {
  return lightBookkeeping() || patched(patchId);
}
