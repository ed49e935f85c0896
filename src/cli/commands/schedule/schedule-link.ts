import type { CliContext } from '../../cli-context';
import { webUiLink } from '../../temporal-client';

/** The schedule's page in the Web UI, when there is one. */
export function scheduleLink(context: CliContext, id: string): string | undefined {
  return webUiLink(context.temporal, id)?.replace(/\/workflows\/[^/]*$/, `/schedules/${encodeURIComponent(id)}`);
}
