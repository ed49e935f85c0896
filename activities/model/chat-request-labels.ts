/**
 * Labels (`ChatRequest.labels`, sent as request headers `x-react-agent-<label>`) that let a model
 * server's logs be matched to a run and a model call.
 */

/** The run's workflow id: on the model activity's calls and compression's summaries. */
export const WORKFLOW_ID_LABEL = 'workflow-id';
/** The model call's 1-based number in the run. */
export const MODEL_CALL_LABEL = 'model-call';

/** Request headers a label becomes: `x-react-agent-<label>`, so a server's logs can be matched to a run and a call. */
export const labelHeader = (label: string): string => `x-react-agent-${label}`;

/** A request's labels as the headers every model API sends them with. */
export function labelHeaders(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).map(([label, value]) => [labelHeader(label), value]));
}
