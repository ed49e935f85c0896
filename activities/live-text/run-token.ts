import { createHmac, randomBytes } from 'node:crypto';

/**
 * The capability to read a run's stream on one worker process (issue 32): HMAC-SHA256 of the
 * run's workflow id and run id under a secret the process draws at start, 64 hex digits. The
 * same for every call of the run on that process (so watchers need one URL per worker), unknown
 * to anyone who has not read a heartbeat of the run (which is where the worker publishes it, as
 * it does each call's own URL), and different on every worker and after every restart.
 */
export class RunTokens {
  constructor(private readonly secret: Uint8Array = randomBytes(32)) {}

  /** The run's token on this process. */
  of(workflowId: string, runId: string): string {
    // Length-prefixed, so no (workflow id, run id) pair shares its input with another.
    return createHmac('sha256', this.secret).update(`${workflowId.length}:${workflowId}\n${runId}`).digest('hex');
  }
}
