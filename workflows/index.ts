export { researchAgent } from './research-agent';
export { researchBatch } from './research-batch';
export { evaluation } from './evaluation';
export { modelLimiter } from './model-limiter';
export { progressQuery, type RunProgress } from '../src/core/message-definitions';
import './versioning-behaviors';
