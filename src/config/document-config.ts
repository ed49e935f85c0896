import { type Environment, readPositiveInteger, readPositiveNumber } from './environment-values';

/**
 * Limits on reading documents (`parse_file`; `visit`'s PDFs), read by {@link loadDocumentConfig}.
 * Each document is read in a worker thread of its own with these limits; past one, the model
 * reads that the document is too large (never retried).
 */
export interface DocumentConfig {
  /** Largest file `parse_file` reads. `REACT_AGENT_DOCUMENT_MAX_BYTES`; default 20,971,520 (20 MB). */
  maxBytes: number;
  /**
   * Most bytes the parts of a .docx that are read (its XML; images are skipped) may inflate to.
   * `REACT_AGENT_DOCUMENT_MAX_INFLATED_BYTES`; default 16,777,216 (16 MB).
   */
  maxInflatedBytes: number;
  /** A document's text is cut here. `REACT_AGENT_DOCUMENT_MAX_TEXT_CHARACTERS`; default 1,000,000. */
  maxTextCharacters: number;
  /** Heap of the thread that reads one document. `REACT_AGENT_DOCUMENT_HEAP_MB`; default 1024. */
  heapMegabytes: number;
  /**
   * Bytes of typed arrays (a PDF's inflated streams) the thread may allocate for one document.
   * `REACT_AGENT_DOCUMENT_MAX_BINARY_BYTES`; default 268,435,456 (256 MB).
   */
  maxBinaryBytes: number;
  /** Longest one document may take to read, in milliseconds. `REACT_AGENT_DOCUMENT_TIMEOUT_SECONDS` (seconds); default 120. */
  timeoutMs: number;
}

/** Default of {@link DocumentConfig.maxBytes}. */
export const DEFAULT_DOCUMENT_MAX_BYTES_SETTING = 20 * 1024 * 1024;
/** Default of {@link DocumentConfig.maxInflatedBytes}. */
export const DEFAULT_DOCUMENT_MAX_INFLATED_BYTES_SETTING = 16 * 1024 * 1024;
/** Default of {@link DocumentConfig.maxTextCharacters}. */
export const DEFAULT_DOCUMENT_MAX_TEXT_CHARACTERS_SETTING = 1_000_000;
/** Default of {@link DocumentConfig.heapMegabytes}. */
export const DEFAULT_DOCUMENT_HEAP_MB_SETTING = 1024;
/** Default of {@link DocumentConfig.maxBinaryBytes}. */
export const DEFAULT_DOCUMENT_MAX_BINARY_BYTES_SETTING = 256 * 1024 * 1024;
/** Default of `REACT_AGENT_DOCUMENT_TIMEOUT_SECONDS`. */
export const DEFAULT_DOCUMENT_TIMEOUT_SECONDS = 120;

/**
 * Reads the document limits from the environment.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable when one is not a positive integer (the timeout: a positive number).
 */
export function loadDocumentConfig(environment: Environment = process.env): DocumentConfig {
  return {
    maxBytes: readPositiveInteger(environment, 'REACT_AGENT_DOCUMENT_MAX_BYTES', DEFAULT_DOCUMENT_MAX_BYTES_SETTING),
    maxInflatedBytes: readPositiveInteger(
      environment,
      'REACT_AGENT_DOCUMENT_MAX_INFLATED_BYTES',
      DEFAULT_DOCUMENT_MAX_INFLATED_BYTES_SETTING,
    ),
    maxTextCharacters: readPositiveInteger(
      environment,
      'REACT_AGENT_DOCUMENT_MAX_TEXT_CHARACTERS',
      DEFAULT_DOCUMENT_MAX_TEXT_CHARACTERS_SETTING,
    ),
    heapMegabytes: readPositiveInteger(environment, 'REACT_AGENT_DOCUMENT_HEAP_MB', DEFAULT_DOCUMENT_HEAP_MB_SETTING),
    maxBinaryBytes: readPositiveInteger(
      environment,
      'REACT_AGENT_DOCUMENT_MAX_BINARY_BYTES',
      DEFAULT_DOCUMENT_MAX_BINARY_BYTES_SETTING,
    ),
    timeoutMs:
      readPositiveNumber(environment, 'REACT_AGENT_DOCUMENT_TIMEOUT_SECONDS', DEFAULT_DOCUMENT_TIMEOUT_SECONDS) * 1000,
  };
}
