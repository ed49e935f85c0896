import { everyRunOptionsHelp } from '../../run-options';
import { evaluateOptionsHelp } from '../../evaluate-option';
import { OVERLAP_POLICIES } from '../../schedule-spec';

export const scheduleHelp = `Usage: react-agent schedule <subcommand> ...

Temporal Schedules that start batches (each a researchBatch workflow, as 'react-agent batch' starts).
Each scheduled batch writes to its own dated folder DIR/<schedule-id>/<scheduled start time>/
(the time it was scheduled for, so a backfill writes where that night would have). The input is
stored by content hash when the schedule is created: editing or deleting the file later changes
nothing.

  schedule create <schedule-id> --input FILE --output DIR (--cron EXPR | --every DURATION) [options]
  schedule list
  schedule describe <id>                     next run times, recent batches with their ids and status
  schedule pause <id> [--note TEXT]
  schedule unpause <id> [--note TEXT]
  schedule trigger <id> [--overlap POLICY]    start a batch now
  schedule backfill <id> --from T --to T [--overlap POLICY]
                                             take the actions of a past period (default overlap buffer-all)
  schedule update <id> [any create option]   change what is given, keep the rest
  schedule delete <id>

Options of create and update:
  --input FILE               questions (.jsonl, .json, .csv), checked whole, stored by hash
  --output DIR               base directory the workers can reach
  --cron EXPR                e.g. "0 3 * * *" (03:00 every day); 5 fields, or 6/7, @daily, @every 6h
  --every DURATION           e.g. 30m, 6h, 1d
  --rollouts K               runs per question (default 1)
  --concurrency N            runs at once (default 8)
  --name NAME                a name for the batches (in batch.json)
  --overlap POLICY           ${Object.keys(OVERLAP_POLICIES).join('|')} (default skip): when a batch is still running
  --catchup-window DURATION  how late a missed action may still start (e.g. after an outage); Temporal's default 1 year
  --pause-on-failure         pause the schedule when a batch fails
  --timezone TZ              IANA zone the cron is read in (default UTC)
  --jitter DURATION          start each batch up to this much later, at random
  --paused                   create it paused
  --note TEXT                a note shown with the schedule's state
${evaluateOptionsHelp.replace(/when the batch ends/, 'when each scheduled batch ends (create)')}
${everyRunOptionsHelp}

Durations: 90s, 15m, 6h, 1d, 1h30m. Times (--from, --to): ISO 8601, e.g. 2026-01-01T00:00:00Z.`;
