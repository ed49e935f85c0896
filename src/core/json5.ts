/**
 * JSON5's parser from the package's CommonJS build (`json5/lib/parse`), the one Node loads for
 * `json5`. A workflow bundle would otherwise take the package's browser build, whose bundled
 * `Symbol` polyfill draws a random number as it loads: outside a workflow (where the worker loads
 * src/core once for all its runs, workflow-preload-modules.ts) the SDK refuses that. Same parser,
 * same results.
 */
import parse from 'json5/lib/parse';

export const JSON5 = { parse };
