export { researchAgent } from './research-agent';
export { progressQuery, type RunProgress } from '../src/core/message-definitions';
