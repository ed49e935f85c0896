import { DocumentExtractionError } from '../../../src/documents/document-extraction-error';
import { READABLE_FORMATS_DESCRIPTION } from '../../../src/documents/document-format';
import { DEFAULT_MAXIMUM_DOCUMENT_BYTES } from '../../../src/documents/extract-text';
import { extractTextInThread, type IsolatedExtractionOptions } from '../../../src/documents/extraction-thread';
import { ToolInputError, type ToolDefinition } from '../tool-definition';
import { WorkspacePathResolver } from './workspace-path-resolver';

/** Options of {@link createParseFileTool}. */
export interface ParseFileToolOptions {
  /**
   * Folders the tool may read from. Relative paths in a call are read from the first; absolute
   * paths must lie inside one of them. Required, at least one.
   */
  workspaceDirectories: string[];
  /** Files larger than this are refused with a message. Default 20 MB. */
  maxBytes?: number;
  /**
   * The limits of reading one file, in a worker thread of its own (decompressed size, text,
   * heap, binary allocations, time); see `IsolatedExtractionOptions` for each default.
   */
  documentLimits?: Omit<IsolatedExtractionOptions, 'signal' | 'format' | 'maxBytes'>;
  /** Files read in one call at most. Default 20. */
  maxFilesPerCall?: number;
}

/** Default of {@link ParseFileToolOptions.maxFilesPerCall}. */
export const DEFAULT_MAXIMUM_FILES_PER_CALL = 20;

/** The `files` argument as a list: one string or an array of strings, blanks dropped. */
function requestedFiles(value: unknown, maxFiles: number): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== 'string')) {
    throw new ToolInputError(
      '"files" must be a file path or a list of file paths (strings), like ["report.pdf", "notes/summary.docx"].',
    );
  }
  const files = (list as string[]).map((entry) => entry.trim()).filter(Boolean);
  if (files.length === 0)
    throw new ToolInputError('"files" is empty: pass at least one file path, like ["report.pdf"].');
  if (files.length > maxFiles)
    throw new ToolInputError(`Too many files in one call (${files.length}); read at most ${maxFiles} per call.`);
  return [...new Set(files)];
}

/** What the model should read about a file that could not be read; rethrows unexpected errors (Temporal retries those). */
function problemForModel(error: unknown, requested: string): string {
  if (error instanceof ToolInputError || error instanceof DocumentExtractionError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') return `Permission denied reading ${JSON.stringify(requested)}.`;
  throw error;
}

/**
 * The `parse_file` tool (as in DeepResearch): reads files from the workspace and returns the
 * text of each under a header. Paths are confined to the workspace folders: `..` out of them,
 * absolute paths elsewhere and symbolic links leading outside are refused with a message the
 * model can act on. A file that cannot be read gets its reason under its header while the other
 * files are still returned; when no file could be read the call is a `ToolInputError`.
 */
export function createParseFileTool(options: ParseFileToolOptions): ToolDefinition {
  const resolver = new WorkspacePathResolver(options.workspaceDirectories);
  const maxBytes = options.maxBytes ?? DEFAULT_MAXIMUM_DOCUMENT_BYTES;
  const maxFiles = options.maxFilesPerCall ?? DEFAULT_MAXIMUM_FILES_PER_CALL;

  return {
    name: 'parse_file',
    description:
      `Read local files and return their text. Reads ${READABLE_FORMATS_DESCRIPTION}. ` +
      'Paths are relative to the workspace folder (for example "reports/2024.pdf"); files outside the workspace cannot be read.',
    parameters: {
      type: 'object',
      properties: {
        files: {
          type: ['array', 'string'],
          items: { type: 'string' },
          description:
            'File paths relative to the workspace, e.g. ["report.pdf", "data/sales.csv"]. One path as a string is accepted too.',
        },
      },
      required: ['files'],
      additionalProperties: false,
    },
    activity: { startToCloseSeconds: 300, heartbeatSeconds: 30 },
    async run(args, context) {
      const files = requestedFiles(args.files, maxFiles);
      const sections: string[] = [];
      let readCount = 0;
      for (const [index, requested] of files.entries()) {
        context.signal.throwIfAborted();
        context.heartbeat({ file: requested });
        const position = files.length > 1 ? ` ${index + 1} of ${files.length}` : '';
        try {
          const path = await resolver.resolveFile(requested);
          const document = await extractTextInThread(
            { path },
            { ...options.documentLimits, maxBytes, signal: context.signal },
          ).catch((error: unknown) => {
            // Messages name the file as the model wrote it, not by its real location.
            if (error instanceof DocumentExtractionError)
              throw new DocumentExtractionError(error.problem, error.message.split(path).join(requested));
            throw error;
          });
          const details = [
            document.format,
            document.title ? JSON.stringify(document.title) : undefined,
            document.pages ? `${document.pages} pages` : undefined,
            `${document.text.length.toLocaleString('en-US')} characters`,
          ];
          const body = document.text.trim() || '(The file has no extractable text. A scanned PDF would need OCR.)';
          sections.push(`=== File${position}: ${requested} (${details.filter(Boolean).join(', ')}) ===\n${body}`);
          readCount += 1;
        } catch (error) {
          sections.push(
            `=== File${position}: ${requested} (not read) ===\nError: ${problemForModel(error, requested)}`,
          );
        }
      }
      if (readCount === 0) {
        throw new ToolInputError(sections.map((section) => section.replace(/^=== .*? ===\nError: /, '')).join('\n'));
      }
      return sections.join('\n\n');
    },
  };
}
