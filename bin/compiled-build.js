// Whether the JavaScript compiled at install (dist/, built by `npm run build`, which `npm ci`
// runs) is current: bin/react-agent.js runs it when it is, and the TypeScript sources through
// tsx when it is missing or older than them (a checkout being edited).
'use strict';
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
/** The folders compiled into dist/ (tsconfig.build.json). */
const SOURCE_FOLDERS = ['src', 'workflows', 'activities', 'worker'];

/** Whether `directory`, a folder under it or a .ts file in them changed after `time` (ms). */
function changedSince(directory, time) {
  let entries;
  try {
    if (statSync(directory).mtimeMs > time) return true;
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory() ? changedSince(path, time) : entry.name.endsWith('.ts') && statSync(path).mtimeMs > time)
      return true;
  }
  return false;
}

/**
 * Whether dist/ holds a finished build that started after the last change to the sources (a .ts
 * file written, a file added or removed). dist/build-info.json, written last by the build,
 * records when it started.
 */
function compiledIsCurrent() {
  try {
    const { startedAtMs } = JSON.parse(readFileSync(join(root, 'dist', 'build-info.json'), 'utf8'));
    statSync(join(root, 'dist', 'src', 'cli', 'main.js'));
    return (
      typeof startedAtMs === 'number' && !SOURCE_FOLDERS.some((folder) => changedSince(join(root, folder), startedAtMs))
    );
  } catch {
    return false;
  }
}

module.exports = { compiledIsCurrent, root };
