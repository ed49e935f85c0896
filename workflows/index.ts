export { researchAgent } from './research-agent';
export { progressQuery, type RunProgress } from './definitions';
