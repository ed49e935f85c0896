#!/usr/bin/env node
// Runs the CLI compiled at install (dist/, built by `npm run build`, which `npm ci` runs). When
// that build is missing or older than the TypeScript sources (a checkout being edited), runs the
// sources through tsx instead, so the command always works from a checkout.
'use strict';
const { join } = require('node:path');
const { compiledIsCurrent, root } = require('./compiled-build.js');

let cli;
if (compiledIsCurrent()) {
  cli = (name) => join(root, 'dist', 'src', 'cli', `${name}.js`);
} else {
  require('tsx/cjs');
  cli = (name) => join(root, 'src', 'cli', `${name}.ts`);
}
const { exitWhenFlushed } = require(cli('standard-output'));
require(cli('main'))
  .main(process.argv.slice(2))
  .then(exitWhenFlushed, (error) => {
    console.error(error);
    exitWhenFlushed(1);
  });
