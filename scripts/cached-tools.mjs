// What the setup scripts that keep builds in the user's cache share: where that cache is, and
// the link from the project's .tools/ to the cached build.
import { lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** $REACT_AGENT_CACHE_DIR, else $XDG_CACHE_HOME/react-agent, else ~/.cache/react-agent. */
export function cacheDirectory() {
  if (process.env.REACT_AGENT_CACHE_DIR) return process.env.REACT_AGENT_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'react-agent');
}

/** Points the symlink `link` at `target`, replacing a link (or anything else) that points elsewhere. */
export function pointLinkAt(link, target) {
  mkdirSync(dirname(link), { recursive: true });
  let current;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : 'not a link';
  } catch {
    current = undefined;
  }
  if (current !== target) {
    if (current !== undefined) rmSync(link, { recursive: true, force: true });
    symlinkSync(target, link);
  }
}
