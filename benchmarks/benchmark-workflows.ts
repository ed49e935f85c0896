// Every design a benchmark compares, in one bundle so one worker serves the benchmark.
export { researchAgent } from '../workflows';
export { naiveResearchAgent } from './naive-baseline/workflows';
export { temporalFloor } from './floor-workflows';
