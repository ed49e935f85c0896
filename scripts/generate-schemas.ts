import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createGenerator, type Config } from 'ts-json-schema-generator';
import { CONTRACT_VERSION } from '../src/core/workflow-types';

/*
 * The JSON Schemas of the client contract (schemas/), generated from the TypeScript types in
 * src/core: the types are the one source of truth, their TSDoc (descriptions, @minimum,
 * @maximum, @asType integer, @pattern …) becomes the schemas' constraints, and the workflows
 * validate their inputs against these very files. `npm run schemas` rewrites them;
 * test/unit/contract-schemas.test.ts fails when a type changed and they were not regenerated.
 */

const ROOT = resolve(__dirname, '..');
export const SCHEMA_DIRECTORY = join(ROOT, 'schemas');

/** One payload of the contract: its file in schemas/, and the type it is generated from. */
export interface ContractPayload {
  file: string;
  source: string;
  type: string;
  title: string;
}

export const CONTRACT_PAYLOADS: ContractPayload[] = [
  {
    file: 'researchAgent.input.json',
    source: 'src/core/run-input.ts',
    type: 'ResearchRunRequest',
    title: 'Input of the researchAgent workflow',
  },
  {
    file: 'researchAgent.result.json',
    source: 'src/core/run-result.ts',
    type: 'ResearchRunResult',
    title: 'Result of the researchAgent workflow',
  },
  {
    file: 'researchAgent.progress.json',
    source: 'src/core/message-definitions.ts',
    type: 'RunProgress',
    title: 'Result of the researchAgent query `progress`',
  },
  {
    file: 'researchAgent.injectMessage.request.json',
    source: 'src/core/message-definitions.ts',
    type: 'InjectMessageRequest',
    title: 'Argument of the researchAgent update `injectMessage`',
  },
  {
    file: 'researchAgent.injectMessage.result.json',
    source: 'src/core/message-definitions.ts',
    type: 'InjectMessageResult',
    title: 'Result of the researchAgent update `injectMessage`',
  },
  {
    file: 'researchAgent.finishNow.request.json',
    source: 'src/core/message-definitions.ts',
    type: 'FinishNowRequest',
    title: 'Argument of the researchAgent update `finishNow`',
  },
  {
    file: 'researchAgent.finishNow.result.json',
    source: 'src/core/message-definitions.ts',
    type: 'FinishNowResult',
    title: 'Result of the researchAgent update `finishNow`',
  },
  {
    file: 'researchAgent.setLimits.request.json',
    source: 'src/core/run-steering.ts',
    type: 'LimitChanges',
    title: 'Argument of the researchAgent update `setLimits`',
  },
  {
    file: 'researchAgent.setLimits.result.json',
    source: 'src/core/run-limits.ts',
    type: 'RunLimits',
    title: 'Result of the researchAgent update `setLimits`: the limits in force',
  },
  {
    file: 'researchAgent.approveToolCall.request.json',
    source: 'src/core/run-steering.ts',
    type: 'ApprovalDecision',
    title: 'Argument of the researchAgent update `approveToolCall`',
  },
  {
    file: 'researchAgent.approveToolCall.result.json',
    source: 'src/core/message-definitions.ts',
    type: 'ApproveToolCallResult',
    title: 'Result of the researchAgent update `approveToolCall`',
  },
  {
    file: 'researchBatch.input.json',
    source: 'src/core/batch-contract.ts',
    type: 'ResearchBatchInput',
    title: 'Input of the researchBatch workflow',
  },
  {
    file: 'researchBatch.result.json',
    source: 'src/core/batch-contract.ts',
    type: 'BatchSummary',
    title: 'Result of the researchBatch workflow',
  },
  {
    file: 'researchBatch.progress.json',
    source: 'src/core/batch-progress.ts',
    type: 'BatchProgress',
    title: 'Result of the researchBatch query `progress`',
  },
  {
    file: 'evaluation.input.json',
    source: 'src/core/evaluation/evaluation-contract.ts',
    type: 'EvaluationWorkflowInput',
    title: 'Input of the evaluation workflow',
  },
  {
    file: 'evaluation.result.json',
    source: 'src/core/evaluation/evaluation-contract.ts',
    type: 'EvaluationOutcome',
    title: 'Result of the evaluation workflow',
  },
];

/** The schemas as they should be on disk: file name → text. */
export function generateContractSchemas(): Map<string, string> {
  const texts = new Map<string, string>();
  // One program over every source file (building one per payload takes seconds each).
  const config: Config = {
    path: join(
      ROOT,
      `src/core/{${[...new Set(CONTRACT_PAYLOADS.map((payload) => payload.source.slice('src/core/'.length))).values()].join(',')}}`,
    ),
    tsconfig: join(ROOT, 'tsconfig.json'),
    skipTypeCheck: true,
    jsDoc: 'extended',
    additionalProperties: false,
    topRef: true,
    expose: 'export',
    sortProps: false,
    // `@patternProblem …`: what a value failing `pattern` is told (src/core/json-schema-validation.ts).
    extraTags: ['patternProblem'],
  };
  const generator = createGenerator(config);
  for (const payload of CONTRACT_PAYLOADS) {
    const generated = generator.createSchema(payload.type) as Record<string, unknown>;
    const { $schema, ...rest } = generated;
    const schema = {
      $schema,
      $id: payload.file,
      title: payload.title,
      $comment: `Client contract ${CONTRACT_VERSION}. Generated from ${payload.type} in ${payload.source} by \`npm run schemas\`; do not edit.`,
      ...rest,
    };
    texts.set(payload.file, `${JSON.stringify(schema, null, 2)}\n`);
  }
  return texts;
}

/** Rewrites schemas/ (removing schema files no payload produces any more). */
export function writeContractSchemas(): string[] {
  mkdirSync(SCHEMA_DIRECTORY, { recursive: true });
  const texts = generateContractSchemas();
  for (const name of readdirSync(SCHEMA_DIRECTORY)) {
    if (name.endsWith('.json') && !texts.has(name)) rmSync(join(SCHEMA_DIRECTORY, name));
  }
  const changed: string[] = [];
  for (const [name, text] of texts) {
    let before: string | undefined;
    try {
      before = readFileSync(join(SCHEMA_DIRECTORY, name), 'utf8');
    } catch {
      before = undefined;
    }
    if (before !== text) {
      writeFileSync(join(SCHEMA_DIRECTORY, name), text);
      changed.push(name);
    }
  }
  return changed;
}

if (require.main === module) {
  const changed = writeContractSchemas();
  console.log(changed.length ? `schemas/: rewrote ${changed.join(', ')}` : 'schemas/: up to date');
}
