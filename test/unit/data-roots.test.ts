import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadDataRoots } from '../../src/config/data-roots-config';
import { PROJECT_ROOT } from '../../src/config/project-root';
import { DEFAULT_DATA_DIRECTORY } from '../../src/config/worker-config';
import { jsonParseProblem, jsonParseProblemSuffix } from '../../src/domain/json-parse-problem';
import {
  checkInsideDataRoots,
  isInsideRoot,
  isInsideSomeRoot,
  outsideDataRootsMessage,
  PathOutsideDataRootsError,
  realLocationOf,
} from '../../src/storage/data-roots';

const directory = mkdtempSync(join(tmpdir(), 'data-roots-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the pure decision: inside a root or not', () => {
  test('a root and what is below it are inside; a sibling with the same prefix, its parent and `..` out of it are not', () => {
    assert.equal(isInsideRoot('/srv/data', '/srv/data'), true);
    assert.equal(isInsideRoot('/srv/data/batch/iter1.jsonl', '/srv/data'), true);
    assert.equal(isInsideRoot('/srv/data-other/x', '/srv/data'), false);
    assert.equal(isInsideRoot('/srv', '/srv/data'), false);
    assert.equal(isInsideRoot(resolve('/srv/data/../../etc/passwd'), '/srv/data'), false);
    assert.equal(isInsideRoot('/srv/data/..hidden', '/srv/data'), true);
    assert.equal(isInsideRoot('/etc/passwd', '/'), true);
  });

  test('any of several roots will do; none will not', () => {
    assert.equal(isInsideSomeRoot('/b/x', ['/a', '/b']), true);
    assert.equal(isInsideSomeRoot('/c/x', ['/a', '/b']), false);
    assert.equal(isInsideSomeRoot('/a', []), false);
  });

  test('the refusal names the path as given and the roots and the variable; a huge path is cut', () => {
    const message = outsideDataRootsMessage('/etc/passwd', ['/srv/data', '/opt/agent'], "The evaluation's input");
    assert.equal(
      message,
      `The evaluation's input "/etc/passwd" is outside the folders this worker reads and writes for clients (/srv/data, /opt/agent); give a path inside one of them, or have the operator add its folder to REACT_AGENT_DATA_ROOTS.`,
    );
    const huge = outsideDataRootsMessage(`/${'a'.repeat(100_000)}`, ['/srv/data'], 'The path');
    assert.ok(huge.length < 1_000, `${huge.length} characters`);
    assert.match(huge, /100001 characters/);
  });
});

describe('checking a path on the file system', () => {
  const root = join(directory, 'root');
  const outside = join(directory, 'outside');
  mkdirSync(join(root, 'batch'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(root, 'batch', 'iter1.jsonl'), '{}\n');
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-to-secret.jsonl'));
  symlinkSync(outside, join(root, 'link-to-outside'));
  symlinkSync(join(outside, 'no-such-file'), join(root, 'dangling'));
  symlinkSync(join(root, 'batch'), join(root, 'link-inside'));
  const roots = [root];

  async function refusal(path: string): Promise<string> {
    try {
      await checkInsideDataRoots(path, roots, 'The path');
    } catch (error) {
      assert.ok(error instanceof PathOutsideDataRootsError, String(error));
      assert.equal(error.path, path);
      return error.message;
    }
    assert.fail(`${path} was accepted`);
  }

  test('files and folders inside, made or not yet, pass, and so does a link that stays inside and any s3:// location', async () => {
    await checkInsideDataRoots(join(root, 'batch', 'iter1.jsonl'), roots, 'The path');
    await checkInsideDataRoots(join(root, 'batch'), roots, 'The path');
    await checkInsideDataRoots(join(root, 'not', 'yet', 'made'), roots, 'The path');
    await checkInsideDataRoots(join(root, 'link-inside', 'iter1.jsonl'), roots, 'The path');
    await checkInsideDataRoots(join(root, 'batch', '..', 'batch', 'iter1.jsonl'), roots, 'The path');
    await checkInsideDataRoots('s3://bucket/prefix', roots, 'The path');
  });

  test('outside, `..` out, a link out (to a file, through a folder, dangling), relative and NUL paths are refused', async () => {
    for (const path of [
      '/etc/passwd',
      join(outside, 'secret.txt'),
      `${root}/../outside/secret.txt`,
      join(root, 'link-to-secret.jsonl'),
      join(root, 'link-to-outside', 'secret.txt'),
      join(root, 'link-to-outside', 'new', 'folder'),
      join(root, 'dangling'),
      join(root, 'dangling', 'below'),
      'relative/path',
      `${root}/x\0y`,
    ]) {
      await refusal(path);
    }
  });

  test('the refusal is the same whether the file exists or not, and holds nothing of it', async () => {
    const existing = await refusal(join(outside, 'secret.txt'));
    const missing = await refusal(join(outside, 'no-such.txt'));
    assert.equal(existing.replace('secret.txt', 'X'), missing.replace('no-such.txt', 'X'));
    const linked = await refusal(join(root, 'link-to-secret.jsonl'));
    const dangling = await refusal(join(root, 'dangling'));
    assert.equal(linked.replace('link-to-secret.jsonl', 'X'), dangling.replace('dangling', 'X'));
    for (const message of [existing, missing, linked, dangling]) assert.doesNotMatch(message, /top secret/);
    for (const message of [linked, dangling]) assert.doesNotMatch(message, new RegExp(outside)); // where a link leads is not told either
  });

  test('a root configured through a link takes paths through the link and through where it really is; a path outside every root as written is refused before it is looked at', async () => {
    const viaLink = join(directory, 'root-link');
    symlinkSync(root, viaLink);
    await checkInsideDataRoots(join(root, 'batch'), [viaLink], 'The path');
    await checkInsideDataRoots(join(viaLink, 'batch'), [viaLink], 'The path');
    await assert.rejects(
      checkInsideDataRoots(join(outside, 'secret.txt'), [viaLink], 'The path'),
      PathOutsideDataRootsError,
    );
    await assert.rejects(checkInsideDataRoots(join(viaLink, 'batch'), [root], 'The path'), PathOutsideDataRootsError);
  });

  test('realLocationOf: the nearest existing folder, resolved, with the rest appended; undefined for a dangling link', async () => {
    assert.equal(await realLocationOf(join(root, 'link-to-outside', 'a', 'b')), join(outside, 'a', 'b'));
    assert.equal(await realLocationOf(join(root, 'dangling')), undefined);
  });
});

describe('REACT_AGENT_DATA_ROOTS', () => {
  test('default: the data directory and the project folder', () => {
    assert.deepEqual(loadDataRoots({}), [DEFAULT_DATA_DIRECTORY, PROJECT_ROOT]);
    assert.deepEqual(loadDataRoots({ REACT_AGENT_DATA_DIR: '/srv/agent' }), ['/srv/agent', PROJECT_ROOT]);
  });

  test('a comma-separated list, relative folders from the current directory, duplicates once', () => {
    assert.deepEqual(
      loadDataRoots({ REACT_AGENT_DATA_ROOTS: '/srv/a, out ,/srv/a/', REACT_AGENT_DATA_DIR: '/ignored' }),
      ['/srv/a', resolve('out')],
    );
  });

  test('set but naming no folder is refused naming the variable', () => {
    assert.throws(
      () => loadDataRoots({ REACT_AGENT_DATA_ROOTS: ' , ,' }),
      (error: unknown) =>
        error instanceof ConfigurationError &&
        error.variable === 'REACT_AGENT_DATA_ROOTS' &&
        /one or more folders/.test(error.message),
    );
  });
});

describe('JSON parse errors without the text', () => {
  function parseError(text: string): unknown {
    try {
      JSON.parse(text);
    } catch (error) {
      return error;
    }
    throw new Error(`${text} parsed`);
  }

  test('the position or the early end, never a character of the text', () => {
    const passwd = parseError('root:x:0:0:root:/root:/bin/bash');
    assert.match((passwd as Error).message, /root:x:0/); // what V8 says, and why it is not passed on
    assert.equal(jsonParseProblem(passwd), undefined);
    assert.equal(jsonParseProblemSuffix(passwd), '');
    assert.equal(jsonParseProblem(parseError('{"secret": 1 "x": 2}')), 'at character 14');
    assert.equal(jsonParseProblemSuffix(parseError('{"secret":')), ' (it ends too early)');
    assert.equal(jsonParseProblem(new Error('anything')), undefined);
  });
});
