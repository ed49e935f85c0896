import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadDocumentConfig } from '../../src/config/document-config';

describe('loadDocumentConfig', () => {
  test('defaults: 20 MB files, 16 MB inflated, 1,000,000 characters, 1024 MB heap, 256 MB binary, 120 s', () => {
    assert.deepEqual(loadDocumentConfig({}), {
      maxBytes: 20 * 1024 * 1024,
      maxInflatedBytes: 16 * 1024 * 1024,
      maxTextCharacters: 1_000_000,
      heapMegabytes: 1024,
      maxBinaryBytes: 256 * 1024 * 1024,
      timeoutMs: 120_000,
    });
  });

  test('each variable is read', () => {
    assert.deepEqual(
      loadDocumentConfig({
        REACT_AGENT_DOCUMENT_MAX_BYTES: '1000',
        REACT_AGENT_DOCUMENT_MAX_INFLATED_BYTES: '2000',
        REACT_AGENT_DOCUMENT_MAX_TEXT_CHARACTERS: '3000',
        REACT_AGENT_DOCUMENT_HEAP_MB: '256',
        REACT_AGENT_DOCUMENT_MAX_BINARY_BYTES: '4000',
        REACT_AGENT_DOCUMENT_TIMEOUT_SECONDS: '2.5',
      }),
      {
        maxBytes: 1000,
        maxInflatedBytes: 2000,
        maxTextCharacters: 3000,
        heapMegabytes: 256,
        maxBinaryBytes: 4000,
        timeoutMs: 2500,
      },
    );
  });

  test('a value that is not a positive number is refused, naming the variable', () => {
    for (const variable of [
      'REACT_AGENT_DOCUMENT_MAX_INFLATED_BYTES',
      'REACT_AGENT_DOCUMENT_HEAP_MB',
      'REACT_AGENT_DOCUMENT_TIMEOUT_SECONDS',
    ]) {
      assert.throws(
        () => loadDocumentConfig({ [variable]: '-5' }),
        (error: unknown) =>
          error instanceof ConfigurationError && error.variable === variable && error.message.includes(variable),
      );
    }
  });
});
