import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** How the run ended (see `Termination`). Register as Keyword. */
export const REACT_TERMINATION = defineSearchAttributeKey('ReactTermination', SearchAttributeType.KEYWORD);
/** Model calls made so far. Register as Int. */
export const REACT_ITERATIONS = defineSearchAttributeKey('ReactIterations', SearchAttributeType.INT);

/** The search attributes the project needs registered on the namespace, name → type. */
export const PROJECT_SEARCH_ATTRIBUTES = { ReactTermination: 'Keyword', ReactIterations: 'Int' } as const;
