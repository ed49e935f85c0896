/** What the scheduled batches' memo says, for `schedule list` and `schedule describe`. */
export interface ScheduleMemo {
  questions: number;
  rollouts: number;
  output: string;
  schedule: string;
  cron?: string;
  every?: string;
  source?: string;
  name?: string;
}
