#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so the command works straight from a checkout.
require('tsx/cjs');
const { exitWhenFlushed } = require('../src/cli/standard-output.ts');
require('../src/cli/main.ts')
  .main(process.argv.slice(2))
  .then(exitWhenFlushed, (error) => {
    console.error(error);
    exitWhenFlushed(1);
  });
