import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { DevServerStartError, isTransientStartError, isTransientStartFailure } from '../../src/processes/dev-server';

const prefix =
  'The Temporal dev server (temporal server start-dev, 127.0.0.1:40001, database /tmp/t.sqlite) exited with code 2. Last lines of /tmp/temporal-server.log:\n';

test('a lost port race and a crash of the Go runtime during start are tried again', () => {
  assert.equal(
    isTransientStartFailure(
      `${prefix}time=... level=ERROR msg="listen tcp 127.0.0.1:40001: bind: address already in use"`,
    ),
    true,
  );
  assert.equal(
    isTransientStartFailure(
      `${prefix}fatal error: concurrent map read and map write\n\ngoroutine 77 [running]:\ninternal/runtime/maps.fatal(...)`,
    ),
    true,
  );
  assert.equal(
    isTransientStartFailure(
      `${prefix}panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV]`,
    ),
    true,
  );
});

test('a server that was slow, or refused its flags or database, is not tried again', () => {
  assert.equal(
    isTransientStartFailure(
      `${prefix.replace('exited with code 2', 'was not ready within 60000 ms (last problem: no answer yet)')}`,
    ),
    false,
  );
  assert.equal(isTransientStartFailure(`${prefix}Error: unknown flag: --no-such-flag`), false);
  assert.equal(isTransientStartFailure(`${prefix}Error: unable to open database file: permission denied`), false);
  // A word in a path or a message is not a crash: only a line that starts with it.
  assert.equal(isTransientStartFailure(`${prefix}msg="recovered from panic: in handler" (logged, not fatal)`), false);
});

test('a panic whose stack fills the last lines of the message is still tried again, by what the server wrote', () => {
  const stack = Array.from({ length: 30 }, (_, frame) => `\tgo.temporal.io/server/temporal.frame${frame}(...)`);
  const message = `${prefix}${stack.slice(-25).join('\n')}`;
  const output = ['panic: listen tcp 127.0.0.1:40017: bind: address already in use', '', ...stack].join('\n');
  assert.equal(isTransientStartFailure(message), false, 'the message alone does not show the panic');
  assert.equal(isTransientStartError(new DevServerStartError(message, '/tmp/temporal-server.log', output)), true);
  assert.equal(isTransientStartError(new DevServerStartError(message, '/tmp/temporal-server.log')), false);
  assert.equal(isTransientStartError(new Error(output)), false, 'only a failed start of the dev server');
});
