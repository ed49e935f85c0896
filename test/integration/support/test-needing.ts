import { test } from '@jest/globals';

type TestBody = Parameters<typeof test>[1];

/**
 * `test` for a test that needs something of the machine (Prometheus, promtool, a sandbox level):
 * where it is missing, the test still runs and fails with why and how to install it, so a test
 * that cannot run here is never counted as passed nor left out. `.ci/run` installs what they need.
 *
 * @param missing Why the prerequisite is missing (e.g. `prometheusMissing()`); undefined when it is here.
 * @example const withPromtool = testNeeding(promtoolMissing()); withPromtool('promtool check rules accepts it', () => { … });
 */
export function testNeeding(missing: string | undefined): (name: string, body: TestBody, timeoutMs?: number) => void {
  return (name, body, timeoutMs) => {
    if (missing === undefined) test(name, body, timeoutMs);
    else
      test(
        name,
        () => {
          throw new Error(`Cannot run here: ${missing}`);
        },
        timeoutMs,
      );
  };
}
