import { test } from '@jest/globals';

type TestBody = Parameters<typeof test>[1];

/**
 * `test` when a prerequisite of the machine is here, else `test.skip` with why in the test's name:
 * a test that cannot run here is counted by jest as skipped, with its reason, never as passed.
 *
 * @param missing Why the prerequisite is missing (e.g. `prometheusMissing()`); undefined when it is here.
 * @example const withPromtool = testWhen(promtoolMissing()); withPromtool('promtool check rules accepts it', () => { … });
 */
export function testWhen(missing: string | undefined): (name: string, body: TestBody, timeoutMs?: number) => void {
  return (name, body, timeoutMs) => {
    if (missing === undefined) test(name, body, timeoutMs);
    else test.skip(`${name} (not run here: ${missing})`, body, timeoutMs);
  };
}
