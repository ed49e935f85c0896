/**
 * What an activity in a run's history is, by its name. The agent's own activities are the ones
 * `createAgentActivities` (activities/index.ts) registers; every other activity is a tool (named
 * after it) or something this CLI does not know, which the display shows generically.
 */
export type ActivityRole = 'model' | 'compression' | 'context-window' | 'bookkeeping' | 'other';

/** The agent's own activities and their roles (a unit test checks this against activities/index.ts). */
export const AGENT_ACTIVITY_ROLES: Readonly<Record<string, Exclude<ActivityRole, 'other'>>> = {
  callModel: 'model',
  compressContext: 'compression',
  learnContextWindow: 'context-window',
  startConversation: 'bookkeeping',
  finishTranscript: 'bookkeeping',
};

/** The role of the activity named `name`; 'other' for tools and anything unknown. */
export function activityRole(name: string): ActivityRole {
  return Object.prototype.hasOwnProperty.call(AGENT_ACTIVITY_ROLES, name)
    ? (AGENT_ACTIVITY_ROLES[name] as ActivityRole)
    : 'other';
}
