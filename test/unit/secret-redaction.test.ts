import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { configuredSecrets } from '../../src/config/configured-secrets';
import { maskUrlCredentials, SecretRedactor, secretForms, urlCredentials } from '../../src/domain/secret-redaction';

const KEY = 'sk-proj-Abc123xyz789_secret';

describe('SecretRedactor', () => {
  const redactor = new SecretRedactor([KEY]);

  test('the literal secret, every time it occurs', () => {
    assert.equal(
      redactor.redact(`Incorrect API key provided: ${KEY}. Again: ${KEY}`),
      'Incorrect API key provided: [redacted]. Again: [redacted]',
    );
  });

  test('encoded forms: base64 and base64url at any byte alignment, hex either case, percent-encoded, JSON-escaped', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      const encoded = Buffer.from(`${prefix}${KEY}`).toString('base64');
      const redacted = redactor.redact(`Authorization: Basic ${encoded}`);
      assert.match(redacted, /\[redacted\]/, `base64 after "${prefix}"`);
      // What is left of the encoding are the few characters that also depend on the bytes around the secret.
      assert.ok(
        redacted.replace('[redacted]', '').length <=
          'Authorization: Basic '.length + 4 + Math.ceil((prefix.length * 4) / 3),
        redacted,
      );
      assert.match(
        redactor.redact(Buffer.from(`${prefix}${KEY}`).toString('base64url')),
        /\[redacted\]/,
        `base64url after "${prefix}"`,
      );
    }
    const hex = Buffer.from(KEY).toString('hex');
    assert.equal(redactor.redact(`x ${hex} ${hex.toUpperCase()} y`), 'x [redacted] [redacted] y');
    const percent = [...Buffer.from(KEY)]
      .map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`)
      .join('');
    assert.equal(redactor.redact(`?key=${percent}`), '?key=[redacted]');
    const quoted = new SecretRedactor(['pa"ss\\word-123']);
    assert.equal(quoted.redact(JSON.stringify({ token: 'pa"ss\\word-123' })), '{"token":"[redacted]"}');
  });

  test('reversed and spaced out', () => {
    assert.equal(redactor.redact(`reversed: ${[...KEY].reverse().join('')}`), 'reversed: [redacted]');
    assert.equal(redactor.redact(`spaced: ${[...KEY].join(' ')}!`), 'spaced: [redacted]!');
    assert.equal(redactor.redact(`lines: ${[...KEY].join('\n')}`), 'lines: [redacted]');
  });

  test('a secret shorter than 8 characters is left alone, and ordinary text is untouched', () => {
    assert.equal(new SecretRedactor(['abc1234']).redact('abc1234 about'), 'abc1234 about');
    assert.deepEqual(secretForms('short'), []);
    const text = 'The answer is 42; see sha256:0123456789abcdef and https://example.com/a?b=c.';
    assert.equal(redactor.redact(text), text);
  });

  test('the user information of any URL is masked, with or without configured secrets', () => {
    assert.equal(
      maskUrlCredentials('fetch http://user:hunter2@10.0.0.5:8080/v1 failed'),
      'fetch http://[redacted]@10.0.0.5:8080/v1 failed',
    );
    assert.equal(
      SecretRedactor.none.redact('https://ghp_token@github.com/x and https://example.com/@handle'),
      'https://[redacted]@github.com/x and https://example.com/@handle',
    );
    assert.equal(maskUrlCredentials('mail me at a@b.c'), 'mail me at a@b.c');
  });

  test('plain data: every string redacted, a copy only when something changed', () => {
    const data = { preview: `key ${KEY}`, nested: [{ text: KEY }, 3, null], untouched: 'fine' };
    assert.deepEqual(redactor.redactValue(data), {
      preview: 'key [redacted]',
      nested: [{ text: '[redacted]' }, 3, null],
      untouched: 'fine',
    });
    const clean = { a: 'b', c: [1, 'd'] };
    assert.equal(redactor.redactValue(clean), clean);
  });

  test('an error: message, stack, ApplicationFailure details and every cause, in place', () => {
    const cause = new Error(`401 Incorrect API key provided: ${KEY}`);
    const failure = ApplicationFailure.create({
      type: 'X',
      message: `rejected: ${cause.message}`,
      details: [{ echoed: KEY }],
      cause,
    });
    assert.equal(redactor.redactError(failure), failure);
    assert.equal(failure.message, 'rejected: 401 Incorrect API key provided: [redacted]');
    assert.ok(!failure.stack?.includes(KEY));
    assert.deepEqual(failure.details, [{ echoed: '[redacted]' }]);
    assert.equal(cause.message, '401 Incorrect API key provided: [redacted]');
    assert.ok(!cause.stack?.includes(KEY));
    assert.equal(failure.type, 'X');
  });

  test('with() adds secrets', () => {
    assert.equal(redactor.with(['mcp-token-0123456']).redact(`${KEY} mcp-token-0123456`), '[redacted] [redacted]');
  });
});

describe('configuredSecrets', () => {
  test('the named keys, variables named like secrets, and URL credentials', () => {
    const secrets = configuredSecrets({
      OPENAI_API_KEY: KEY,
      REACT_AGENT_JUDGE_API_KEY: 'judge-key-0123456',
      SERPER_API_KEY: 'serper-0123456789',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456',
      GITHUB_TOKEN: 'ghp_0123456789abcdef',
      OPENAI_BASE_URL: 'http://agent:p%40ss-word-123@127.0.0.1:8080/v1',
      SEARXNG_URL: 'https://only-a-token-123@search.example',
      REACT_AGENT_MODEL: 'gpt-4o-mini',
      REACT_AGENT_MAX_TOKENS: '4096',
      PATH: '/usr/bin',
    });
    assert.deepEqual(
      secrets.sort(),
      [
        KEY,
        'aws-secret-0123456',
        'ghp_0123456789abcdef',
        'judge-key-0123456',
        'only-a-token-123',
        'p%40ss-word-123',
        'p@ss-word-123',
        'serper-0123456789',
      ].sort(),
    );
  });

  test('urlCredentials: the password, or the user name when there is no password', () => {
    assert.deepEqual(urlCredentials('http://user:secret-123@host/v1'), ['secret-123']);
    assert.deepEqual(urlCredentials('https://token-abc@host'), ['token-abc']);
    assert.deepEqual(urlCredentials('http://host:8080/v1'), []);
    assert.deepEqual(urlCredentials('not a url'), []);
  });
});
