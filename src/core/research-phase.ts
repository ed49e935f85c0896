/**
 * What a research run is doing now, as the `progress` query reports it (RunProgress.phase):
 * opening its transcript, calling the model, running a turn's tools, compressing its context,
 * making the final answer call, storing its last messages, or done.
 */
export const RESEARCH_PHASES = [
  'starting',
  'calling_model',
  'running_tools',
  'compressing',
  'final_answer',
  'finishing',
  'done',
] as const;

export type ResearchPhase = (typeof RESEARCH_PHASES)[number];
