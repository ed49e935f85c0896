/**
 * Where the worker's secrets are stopped on their way into a run's history (issue 28, row 6):
 * every activity's result, heartbeat details and failure (message, stack, details and causes)
 * pass through the worker's {@link SecretRedactor} before the SDK records or logs them. So a model
 * server that echoes the key in its 401, a tool whose error quotes a URL with a password, or an
 * MCP server that prints its token reaches neither history (nor the result, the Web UI and the
 * transcript written from it) nor the SDK's "Activity failed" log line.
 */
import type { Context } from '@temporalio/activity';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import type { SecretRedactor } from '../src/domain/secret-redaction';

/**
 * The activity interceptor that redacts with `redactor()` (read at each attempt, so secrets
 * learnt after the worker started count). Register it last: the interceptors before it (tracing)
 * then see the redacted failure too.
 */
export function secretRedactionInterceptor(redactor: () => SecretRedactor): ActivityInterceptorsFactory {
  return (context: Context) => ({ inbound: new RedactingInbound(context, redactor) });
}

class RedactingInbound implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly context: Context,
    private readonly redactor: () => SecretRedactor,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const redactor = this.redactor();
    const send = this.context.heartbeat.bind(this.context);
    (this.context as { heartbeat: (details?: unknown) => void }).heartbeat = (details?: unknown) =>
      send(redactor.redactValue(details));
    try {
      return redactor.redactValue(await next(input));
    } catch (error) {
      throw redactor.redactError(error);
    }
  }
}
