import { upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import {
  modelAttribute,
  questionAttribute,
  REACT_COST,
  REACT_ITERATIONS,
  REACT_MODEL,
  REACT_PROTOCOL,
  REACT_QUESTION,
  REACT_TOKENS,
  tokensAttributeDue,
  usageAttributesDue,
} from '../src/core/search-attributes';
import { lightBookkeeping, patchedOrLight } from './light-bookkeeping';
import { VisibilityPatches } from './patches';
import type { ResearchRun } from './research-run';

/*
 * The search attributes that let the Web UI's list (and `react-agent list`) find a run by what it
 * asks, which model ran it and how many tokens it used (issue 22): set from the workflow, so a run
 * started by any client has them. Behind `patched('run-search-attributes')`: a run recorded before
 * replays without them. A continued run keeps its attributes (continue-as-new carries them).
 * With `light-bookkeeping` (issue 34) that marker is implied, the run's first upsert comes with the
 * transcript (model calls 0 among them), the termination rides in the last, and a model call whose
 * reply ends the run upserts nothing (the last upsert follows at once): per run one upsert at the
 * start, one every tenth model call, one at the end.
 */
const visible = () => patchedOrLight(VisibilityPatches.runSearchAttributes);

/** The model that runs this run: its own `model.model`, else the worker's default learned when the transcript opened. */
function runModel(run: ResearchRun): string | undefined {
  return run.input.model?.model ?? run.state.setup?.model;
}

/** What the run is: question, protocol and (once known) model, with the tokens and model calls so far. */
function describingAttributes(run: ResearchRun): SearchAttributeUpdatePair[] {
  const model = runModel(run);
  return [
    { key: REACT_QUESTION, value: questionAttribute(run.input.question) },
    { key: REACT_PROTOCOL, value: run.protocol.name },
    ...(model ? [{ key: REACT_MODEL, value: modelAttribute(model) }] : []),
    ...usageAttributes(run),
  ];
}

/**
 * Tokens and model calls, and the cost once a call had one (`ReactCost`): a run whose calls have
 * no price, or recorded before prices existed, upserts exactly what it did before, so no marker
 * of its own is needed.
 */
function usageAttributes(run: ResearchRun): SearchAttributeUpdatePair[] {
  const { costUsd } = run.state.usage;
  return [
    { key: REACT_TOKENS, value: run.state.usage.totalTokens },
    { key: REACT_ITERATIONS, value: run.state.modelCalls },
    ...(costUsd !== undefined ? [{ key: REACT_COST, value: costUsd }] : []),
  ];
}

/** Once the transcript is open (the model is known): question, protocol, model, tokens. */
export function recordRunOpened(run: ResearchRun): void {
  if (visible()) upsertSearchAttributes(describingAttributes(run));
}

/**
 * After a model call: tokens and model calls, every tenth call only (`tokensAttributeDue`); in a
 * light run read after the reply, and not when the reply ends the run (`usageAttributesDue`).
 * A run recorded before asks its markers as it did.
 */
export function recordModelCall(run: ResearchRun): void {
  if (lightBookkeeping()) return;
  if (tokensAttributeDue(run.state.modelCalls) && visible()) upsertSearchAttributes(usageAttributes(run));
}

/** A light run's {@link recordModelCall}, once its reply's step is known: `endsRun` when that step ends the loop. */
export function recordModelCallRead(run: ResearchRun, endsRun: boolean): void {
  if (usageAttributesDue(run.state.modelCalls, endsRun) && lightBookkeeping())
    upsertSearchAttributes(usageAttributes(run));
}

/** Before continuing as new: the tokens and model calls so far. */
export function recordContinuation(run: ResearchRun): void {
  if (visible()) upsertSearchAttributes(usageAttributes(run));
}

/**
 * When the run ends: everything again (a run that was in flight when this code was deployed gets
 * its attributes here), with the final tokens, and `also` (a light run's termination) in the same upsert.
 */
export function recordRunEnded(run: ResearchRun, also: SearchAttributeUpdatePair[] = []): void {
  if (visible()) upsertSearchAttributes([...also, ...describingAttributes(run)]);
}
