#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so the command works straight from a checkout.
require('tsx/cjs');
require('../src/cli/main.ts')
  .main(process.argv.slice(2))
  .then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
