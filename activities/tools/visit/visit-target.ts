import { ToolInputError } from '../tool-definition';

/** What one entry of the visit tool's `url` argument names: a web address or a local file. */
export type VisitTarget = { kind: 'web'; url: URL } | { kind: 'file'; reference: string };

const LOCAL_PATH = /^(?:\/|\.\.?[\\/]|[a-z]:[\\/])/i;
const SCHEME_WITH_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\//i;
const HOST_WITH_PORT = /^[^/:?#\s]+:\d+(?:[/?#]|$)/;
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Reads one `url` entry: `file://…`, `/abs/path`, `./rel` or `C:\…` is a local file; an
 * address with a scheme must be http or https; a bare `example.com/page` gets `https://`.
 * @throws ToolInputError for an empty entry, another scheme (ftp:, data:, javascript:, …) or an
 *   address that does not parse.
 */
export function parseVisitTarget(entry: string): VisitTarget {
  const reference = entry.trim().replace(/^<(.*)>$/, '$1');
  if (!reference) throw new ToolInputError('an empty string is not a URL');
  if (/^file:/i.test(reference) || LOCAL_PATH.test(reference)) return { kind: 'file', reference };
  let address = reference;
  if (!SCHEME_WITH_AUTHORITY.test(reference)) {
    if (OTHER_SCHEME.test(reference) && !HOST_WITH_PORT.test(reference)) {
      throw new ToolInputError(
        `${reference} cannot be visited: only http and https addresses (and allowed local files) can be visited.`,
      );
    }
    address = `https://${reference}`;
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ToolInputError(`${reference} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolInputError(
      `${reference} cannot be visited: only http and https addresses (and allowed local files) can be visited.`,
    );
  }
  return { kind: 'web', url };
}
