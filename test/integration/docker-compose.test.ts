/**
 * docker-compose.yml is checked without a Docker engine: scripts/validate-compose.mjs runs
 * docker-compose 1.29.2's `config` (installed by the project's set-up into .tools/compose-venv)
 * and checks the production shape. Nothing is pulled or started.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, test } from '@jest/globals';
import { PROJECT_SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';

const root = resolve(__dirname, '../..');
const directory = mkdtempSync(join(tmpdir(), 'react-agent-compose-'));
const original = readFileSync(join(root, 'docker-compose.yml'), 'utf8');

afterAll(() => rmSync(directory, { recursive: true, force: true }));

function validate(file?: string) {
  const environment = { ...process.env };
  delete environment.REACT_AGENT_S3_SECRET_ACCESS_KEY;
  return spawnSync(process.execPath, [join(root, 'scripts/validate-compose.mjs'), ...(file ? [file] : [])], {
    encoding: 'utf8',
    env: environment,
    timeout: 60_000,
  });
}

function variant(name: string, edit: (text: string) => string): string {
  const path = join(directory, name);
  const text = edit(original);
  assert.notEqual(text, original, `${name}: the edit changed nothing`);
  writeFileSync(path, text);
  return path;
}

test('docker-compose.yml passes docker-compose config and has the production shape', () => {
  const result = validate();
  assert.equal(result.status, 0, result.stderr);
  assert.match(
    result.stdout,
    /docker-compose\.yml: valid \(docker-compose config 1\.29\.2\); \d+ services, \d+ containers at the declared replicas; nothing was started/,
  );
  // Every search attribute the project records is registered by the one-shot service.
  for (const [name, type] of Object.entries(PROJECT_SEARCH_ATTRIBUTES))
    assert.match(original, new RegExp(`${name}=${type}`));
}, 90_000);

test('a file docker-compose itself refuses fails with its message', () => {
  const result = validate(
    variant('schema.yml', (text) =>
      text.replace('    deploy:\n      replicas: 2\n', '    deploy:\n      replicas: two\n'),
    ),
  );
  assert.equal(result.status, 1);
  assert.match(result.stderr, /docker-compose config failed: .*replicas/s);
}, 90_000);

test('a missing search attribute, role or S3 store is named', () => {
  const result = validate(
    variant('shape.yml', (text) =>
      text
        .replace(' ReactRollout=Int ', ' ')
        .replace('REACT_AGENT_WORKER_ROLE: tools', 'REACT_AGENT_WORKER_ROLE: gpu')
        .replace(
          'REACT_AGENT_TRANSCRIPT_STORE: s3://react-agent/transcripts',
          'REACT_AGENT_TRANSCRIPT_STORE: /app/.data/transcripts',
        ),
    ),
  );
  assert.equal(result.status, 1);
  assert.match(result.stderr, /search attribute ReactRollout \(Int\) is not registered by register-search-attributes/);
  assert.match(result.stderr, /no worker service with REACT_AGENT_WORKER_ROLE=tools/);
  assert.match(result.stderr, /worker-tools: REACT_AGENT_WORKER_ROLE=gpu is not workflows, model, tools or all/);
  assert.match(result.stderr, /worker-model: REACT_AGENT_TRANSCRIPT_STORE is not s3:\/\/bucket\/\.\.\./);
}, 90_000);

test('a compose file that drifts from src/config/stack-topology.json (the native stack) is named', () => {
  const result = validate(
    variant('drift.yml', (text) =>
      text
        .replace('    HISTORY_GRPC_PORT: "7234"\n', '    HISTORY_GRPC_PORT: "7334"\n')
        .replace('      TEMPORAL_SERVICES: matching\n', '      TEMPORAL_SERVICES: matching,history\n')
        .replace('temporalio/ui:${TEMPORAL_UI_VERSION:-2.58.1}', 'temporalio/ui:${TEMPORAL_UI_VERSION:-2.39.0}')
        .replace(
          'update-schema --schema-name postgresql/v12/visibility',
          'update-schema --schema-name postgresql/v96/visibility',
        )
        .replace('    REACT_AGENT_MODEL_TASK_QUEUE: react-agent-model\n', '    REACT_AGENT_MODEL_TASK_QUEUE: models\n'),
    ),
  );
  assert.equal(result.status, 1, result.stdout);
  assert.match(result.stderr, /topology: temporal-history has HISTORY_GRPC_PORT=7334, the stack 7234/);
  assert.match(result.stderr, /topology: no service with TEMPORAL_SERVICES=matching/);
  assert.match(result.stderr, /topology: temporal-ui runs temporalio\/ui:2\.39\.0, the stack's Web UI 2\.58\.1/);
  assert.match(
    result.stderr,
    /topology: temporal-schema does not update temporal_visibility to postgresql\/v12\/visibility/,
  );
  assert.match(
    result.stderr,
    /topology: worker-model has REACT_AGENT_MODEL_TASK_QUEUE=models, the stack react-agent-model/,
  );
}, 90_000);
