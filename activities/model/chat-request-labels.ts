/**
 * Labels (`ChatRequest.labels`, sent as request headers `x-react-agent-<label>`) that let a model
 * server's logs be matched to a run and a model call.
 */

/** The run's workflow id: on the model activity's calls and compression's summaries. */
export const WORKFLOW_ID_LABEL = 'workflow-id';
/** The model call's 1-based number in the run. */
export const MODEL_CALL_LABEL = 'model-call';
