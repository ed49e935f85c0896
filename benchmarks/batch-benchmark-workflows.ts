// Both batch designs (and the runs they start) in one bundle, so one worker serves the batch benchmark.
export { researchAgent, researchBatch } from '../workflows';
export { naiveResearchBatch } from './naive-baseline/batch-workflow';
