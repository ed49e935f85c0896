import { DEFAULT_TOOL_ACTIVITY_SETTINGS, type ToolSpec } from '../tool-spec';
import { shortened } from '../text';
import { DELEGATE_TOOL, MAX_DELEGATED_TASKS } from './sub-run-options';

/** Longest sub-question, in characters. */
export const MAX_TASK_QUESTION_CHARACTERS = 4_000;
/** Longest instructions of one task, in characters. */
export const MAX_TASK_INSTRUCTIONS_CHARACTERS = 4_000;

/** One task a `delegate` call hands out: a sub-question, how to go about it, and the tools its sub-run may use. */
export interface DelegatedTask {
  question: string;
  instructions?: string;
  /** The sub-run's tools, a subset of the parent's; the parent's (without `delegate`) when absent. */
  tools?: string[];
}

/**
 * The `delegate` tool as the model is shown it (all three protocols). It runs in the workflow,
 * not as an activity: its activity settings are never used.
 */
export function delegateToolSpec(maxParallel: number): ToolSpec {
  return {
    name: DELEGATE_TOOL,
    description:
      `Hand independent sub-questions to researchers of your own. Each task becomes a research run with your tools ` +
      `that works on its own and reports its answer; up to ${maxParallel} run at the same time, and their model calls, ` +
      `tokens and cost count in your budget. Use it to split a broad question into parts that can be researched ` +
      `separately, then write your answer from their reports. Give each task a self-contained question (the ` +
      `researcher sees nothing of your conversation), optional instructions, and optionally the tools it may use. ` +
      `At most ${MAX_DELEGATED_TASKS} tasks per call.`,
    parameters: {
      type: 'object',
      properties: {
        tasks: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_DELEGATED_TASKS,
          items: {
            type: 'object',
            properties: {
              question: { type: 'string', description: 'The sub-question, self-contained.' },
              instructions: { type: 'string', description: 'How to research it, what to report.' },
              tools: { type: 'array', items: { type: 'string' }, description: 'Tools it may use (default: yours).' },
            },
            required: ['question'],
          },
        },
      },
      required: ['tasks'],
    },
    activity: DEFAULT_TOOL_ACTIVITY_SETTINGS,
    requiresApproval: false,
  };
}

/**
 * The tasks of a `delegate` call's arguments, or the problem the model is told (naming the task
 * and field). `tools` is checked against `parentTools`, the tools the parent's sub-runs may have.
 * Bounded whatever the model sent: at most {@link MAX_DELEGATED_TASKS} tasks are looked at.
 */
export function delegatedTasks(
  args: Record<string, unknown>,
  parentTools: readonly string[],
): { tasks: DelegatedTask[] } | { problem: string } {
  const refuse = (problem: string) => ({
    problem: `Error: ${DELEGATE_TOOL} was not run: ${problem}. Call it again with {"tasks": [{"question": "..."}, ...]}.`,
  });
  const tasks = args.tasks;
  if (!Array.isArray(tasks) || tasks.length === 0) return refuse('"tasks" must be a non-empty list of tasks');
  if (tasks.length > MAX_DELEGATED_TASKS)
    return refuse(`"tasks" has ${tasks.length} tasks, more than the ${MAX_DELEGATED_TASKS} one call may hand out`);
  const read: DelegatedTask[] = [];
  for (const [index, task] of tasks.entries()) {
    const where = `task ${index + 1}`;
    if (typeof task !== 'object' || task === null || Array.isArray(task))
      return refuse(`${where} must be an object with a "question"`);
    const { question, instructions, tools } = task as Record<string, unknown>;
    if (typeof question !== 'string' || !question.trim()) return refuse(`${where} has no "question"`);
    if (question.length > MAX_TASK_QUESTION_CHARACTERS)
      return refuse(`${where}'s question is longer than ${MAX_TASK_QUESTION_CHARACTERS} characters`);
    if (instructions !== undefined && typeof instructions !== 'string')
      return refuse(`${where}'s "instructions" must be text`);
    if (typeof instructions === 'string' && instructions.length > MAX_TASK_INSTRUCTIONS_CHARACTERS)
      return refuse(`${where}'s instructions are longer than ${MAX_TASK_INSTRUCTIONS_CHARACTERS} characters`);
    if (tools !== undefined && (!Array.isArray(tools) || tools.length > 64 || tools.some((t) => typeof t !== 'string')))
      return refuse(`${where}'s "tools" must be a list of tool names`);
    const unknown = (tools as string[] | undefined)?.filter((tool) => !parentTools.includes(tool)) ?? [];
    if (unknown.length)
      return refuse(
        `${where} names ${unknown.map((tool) => `"${shortened(tool)}"`).join(', ')}, not among the tools a sub-run may have ` +
          `(${parentTools.join(', ') || 'none'})`,
      );
    read.push({
      question: question.trim(),
      ...(typeof instructions === 'string' && instructions.trim() ? { instructions: instructions.trim() } : {}),
      ...(tools !== undefined ? { tools: [...new Set(tools as string[])] } : {}),
    });
  }
  return { tasks: read };
}

/** Longest part of the lead's question a sub-run is shown as context. */
const LEAD_QUESTION_CONTEXT_CHARACTERS = 1_000;

/**
 * A sub-run's question: its task, its instructions, and the question of the research it is a
 * part of (shortened), so the researcher knows what its answer serves.
 */
export function subRunQuestion(task: DelegatedTask, leadQuestion: string): string {
  return [
    task.question,
    ...(task.instructions ? [`Instructions: ${task.instructions}`] : []),
    `(This is one part of a larger research question: "${shortened(leadQuestion, LEAD_QUESTION_CONTEXT_CHARACTERS)}". ` +
      `Answer only this part.)`,
  ].join('\n\n');
}
