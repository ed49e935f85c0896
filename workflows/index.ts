export { researchAgent } from './research-agent';
export { researchBatch } from './research-batch';
export { progressQuery, type RunProgress } from '../src/core/message-definitions';
