import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../typescript-process';
import { StackError } from './stack-error';

/** The binaries of Temporal's server the stack runs. */
export interface TemporalServerTools {
  /** `temporal-server`: each of the four services, one process each. */
  server: string;
  /** `temporal-sql-tool`: creates and updates the schemas. */
  sqlTool: string;
  /** `temporal-ui-server`, when it could be built. */
  uiServer?: string;
}

/**
 * Where `npm run setup:temporal-server` links the binaries: `REACT_AGENT_TEMPORAL_SERVER_DIR`, else
 * `.tools/temporal-server`. A StackError saying how to build them when the server or the SQL tool is missing.
 */
export function temporalServerTools(environment: NodeJS.ProcessEnv = process.env): TemporalServerTools {
  const directory =
    environment.REACT_AGENT_TEMPORAL_SERVER_DIR?.trim() || join(PROJECT_ROOT, '.tools', 'temporal-server');
  const server = join(directory, 'bin', 'temporal-server');
  const sqlTool = join(directory, 'bin', 'temporal-sql-tool');
  for (const binary of [server, sqlTool]) {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      throw new StackError(
        `Temporal's server is not built: no ${binary}. Run 'npm run setup:temporal-server' (builds it from the Go module proxy, about 10 minutes the first time).`,
      );
    }
  }
  const uiServer = join(directory, 'bin', 'temporal-ui-server');
  return existsSync(uiServer) ? { server, sqlTool, uiServer } : { server, sqlTool };
}
