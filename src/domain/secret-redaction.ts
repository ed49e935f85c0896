/**
 * Secret redaction (issue 28, rows 6, 12, 15): one concept the worker, its activities, the MCP
 * tool source and the CLI all use, so a configured secret (an API key, a `${VAR}` value of the
 * MCP configuration, a URL's password) never reaches an error, an observation, a log line or a
 * history payload — also when a server echoes it back. Pure: the secrets are handed in by whoever
 * read the configuration (`src/config/configured-secrets.ts` for the worker and the CLI).
 */

/** What a secret, or a URL's user information, is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Secrets shorter than this are not searched for: no API key is that short, and a short value
 * would blank out ordinary words and could match inside a transcript reference (`sha256:…`).
 * Forms of a secret (encoded, reversed) shorter than this are not searched for either.
 */
export const SHORTEST_SECRET = 8;

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Base64 of `bytes` without padding. */
function base64(bytes: Uint8Array): string {
  let text = '';
  for (let index = 0; index < bytes.length; index += 3) {
    const chunk = ((bytes[index] as number) << 16) | ((bytes[index + 1] ?? 0) << 8) | (bytes[index + 2] ?? 0);
    const characters = Math.ceil(((Math.min(3, bytes.length - index) as number) * 8) / 6);
    for (let position = 0; position < characters; position += 1)
      text += BASE64_ALPHABET[(chunk >> (18 - 6 * position)) & 63];
  }
  return text;
}

/**
 * The base64 characters that depend on the secret's bytes alone, for the secret placed 0, 1 or 2
 * bytes into the encoded data: whatever surrounds it (`Basic base64(user:secret)`, a JSON blob
 * encoded whole), one of the three appears in the encoding.
 */
function base64Cores(bytes: Uint8Array): string[] {
  return [0, 1, 2].map((offset) => {
    const shifted = new Uint8Array(offset + bytes.length);
    shifted.set(bytes, offset);
    const encoded = base64(shifted);
    return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Every form of one secret this redactor looks for, literal first. */
export function secretForms(secret: string): string[] {
  if (secret.length < SHORTEST_SECRET) return [];
  const bytes = new TextEncoder().encode(secret);
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const cores = base64Cores(bytes);
  const forms = [
    secret,
    [...secret].reverse().join(''),
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    hex,
    hex.toUpperCase(),
    hex.replace(/../g, '%$&'),
    hex.toUpperCase().replace(/../g, '%$&'),
    ...cores,
    ...cores.map((core) => core.replace(/\+/g, '-').replace(/\//g, '_')),
  ];
  return [...new Set(forms)].filter((form) => form.length >= SHORTEST_SECRET);
}

/**
 * A URL's user information (`scheme://user:password@host`) anywhere in `text`, replaced with
 * `[redacted]`: `http://[redacted]@host`. The host, port and path stay, so the URL still says where.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi, `$1${REDACTED}@`);
}

/**
 * The secret of a URL with credentials, as written and decoded: the password of
 * `http://user:secret@host`, or the user name of `https://token@host` (a token then); none for
 * anything else.
 */
export function urlCredentials(value: string): string[] {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^\s/?#]+)@/i.exec(value.trim());
  if (!match) return [];
  const userinfo = match[1] as string;
  const colon = userinfo.indexOf(':');
  const secret = colon < 0 ? userinfo : userinfo.slice(colon + 1);
  if (secret === '') return [];
  try {
    const decoded = decodeURIComponent(secret);
    return decoded === secret ? [secret] : [secret, decoded];
  } catch {
    return [secret];
  }
}

/**
 * Replaces the configured secrets, in every form {@link secretForms} lists and spaced out, and the
 * user information of every URL, with `[redacted]`. Built once from the secrets (their forms are
 * computed then); `redact` is one pass per pattern over the text.
 *
 * Out of reach, by design: any other transformation a server chooses (ROT13, compression,
 * encryption, a secret split across calls or interleaved with other characters, a case change,
 * a part of a secret). A server that holds a secret can always send it out in a form nobody
 * predicted; redaction stops the accidental echo, the trust stays with the server.
 */
export class SecretRedactor {
  /** Redacts URL user information only. */
  static readonly none = new SecretRedactor([]);

  private readonly secrets: string[];
  private readonly literal: RegExp | undefined;
  private readonly spaced: RegExp | undefined;

  constructor(secrets: readonly string[]) {
    this.secrets = [
      ...new Set(secrets.filter((secret) => typeof secret === 'string' && secret.length >= SHORTEST_SECRET)),
    ];
    const forms = [...new Set(this.secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
    this.literal = forms.length ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined;
    // Characters with whitespace between them ("s k - 1 2 3"), forwards or reversed.
    const spacedForms = this.secrets
      .flatMap((secret) => [secret, [...secret].reverse().join('')])
      .map((form) => [...form].map(escapeRegExp).join('\\s*'));
    this.spaced = spacedForms.length ? new RegExp(spacedForms.join('|'), 'g') : undefined;
  }

  /** This redactor with more secrets (say, the MCP servers' `${VAR}` values once they are read). */
  with(secrets: readonly string[]): SecretRedactor {
    return secrets.length ? new SecretRedactor([...this.secrets, ...secrets]) : this;
  }

  /** `text` with every secret and every URL's user information replaced by `[redacted]`. */
  redact(text: string): string {
    let result = maskUrlCredentials(text);
    if (this.literal) result = result.replace(this.literal, REDACTED);
    if (this.spaced) result = result.replace(this.spaced, REDACTED);
    return result;
  }

  /** Plain data (strings, arrays, plain objects) with every string redacted; anything else as it is. Returns a copy when something changed. */
  redactValue<T>(value: T): T {
    return this.redactData(value, 0) as T;
  }

  private redactData(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (depth > 64 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      const items = value.map((item) => this.redactData(item, depth + 1));
      return items.some((item, index) => item !== value[index]) ? items : value;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    let changed = false;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = this.redactData(item, depth + 1);
      if (copy[key] !== item) changed = true;
    }
    return changed ? copy : value;
  }

  /**
   * Redacts an error in place, as it is about to leave an activity or be printed: its message, its
   * stack (which repeats the message), an `ApplicationFailure`'s details and every cause. Returns it.
   */
  redactError<T>(error: T): T {
    const seen = new Set<unknown>();
    let current: unknown = error;
    while (current !== null && typeof current === 'object' && !seen.has(current)) {
      seen.add(current);
      const record = current as { message?: unknown; stack?: unknown; details?: unknown; cause?: unknown };
      for (const field of ['message', 'stack'] as const) {
        if (typeof record[field] === 'string') {
          const redacted = this.redact(record[field] as string);
          if (redacted !== record[field])
            Object.defineProperty(current, field, {
              value: redacted,
              writable: true,
              configurable: true,
              enumerable: false,
            });
        }
      }
      if (Array.isArray(record.details)) {
        const details = this.redactValue(record.details);
        if (details !== record.details)
          Object.defineProperty(current, 'details', {
            value: details,
            writable: true,
            configurable: true,
            enumerable: true,
          });
      }
      current = record.cause;
    }
    return error;
  }
}
