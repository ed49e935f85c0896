import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import Database from 'better-sqlite3';
import { DocumentExtractionError } from '../documents/document-extraction-error';
import type { DocumentFormat } from '../documents/document-format';
import { DEFAULT_MAXIMUM_DOCUMENT_BYTES, extractTextFromBytes } from '../documents/extract-text';
import { joinCjkCharacters, spaceOutCjkCharacters } from './cjk-segmentation';
import { chunkText, type ChunkTextOptions } from './chunk-text';
import { fullTextQueryTerms } from './full-text-query';

/** Extensions `add` picks up when it walks a folder. */
export const KNOWLEDGE_BASE_EXTENSIONS = [
  '.md',
  '.markdown',
  '.txt',
  '.html',
  '.htm',
  '.pdf',
  '.docx',
  '.csv',
  '.json',
] as const;

/** Options of {@link KnowledgeBase.open}. */
export interface KnowledgeBaseOptions {
  /** Files larger than this are not added (reported as failed). Default 20 MB. */
  maxFileBytes?: number;
  /** How documents are cut into chunks. Defaults: about 1,200 characters, at most 1,500, 150 overlap. */
  chunking?: ChunkTextOptions;
}

/** A document in the knowledge base. */
export interface KnowledgeBaseDocument {
  id: number;
  /** Absolute real path of the file (or the name given to {@link KnowledgeBase.addText}). */
  path: string;
  title: string;
  format: DocumentFormat;
  chunks: number;
  /** Size of the file in bytes. */
  bytes: number;
  /** When it was (last) added, ISO 8601. */
  addedAt: string;
}

/** What happened to one file in {@link KnowledgeBase.add}. */
export interface KnowledgeBaseFileOutcome {
  path: string;
  /** `added` new; `updated` changed since last added (its chunks replaced); `unchanged` same content; `failed` not added (see `reason`). */
  status: 'added' | 'updated' | 'unchanged' | 'failed';
  /** Chunks stored for the file (added, updated, unchanged). */
  chunks?: number;
  /** Why a file failed. */
  reason?: string;
}

/** Counts of {@link KnowledgeBase.add}, with the outcome of each file. */
export interface KnowledgeBaseAddResult {
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
  /** Chunks written by this call (added and updated files). */
  chunksWritten: number;
  files: KnowledgeBaseFileOutcome[];
}

/** One hit of {@link KnowledgeBase.search}: the best-matching chunk of a document. */
export interface KnowledgeBaseSearchResult {
  documentId: number;
  title: string;
  path: string;
  /** The matching passage, query words in `**bold**`, `…` where text was cut. */
  snippet: string;
  /** Relevance (bm25, sign flipped): higher is better; comparable within one query only. */
  score: number;
}

/** Options of {@link KnowledgeBase.add}. */
export interface AddOptions {
  /** Called after each file, e.g. to print progress. */
  onFile?: (outcome: KnowledgeBaseFileOutcome) => void;
  /** Stops between files when aborted. */
  signal?: AbortSignal;
}

const SCHEMA_VERSION = 1;
/** Title matches weigh this much more than body matches in bm25. */
const TITLE_WEIGHT = 3;
const SNIPPET_TOKENS = 40;
/** Below this many chunks every query term is matched (see `termsWorthMatching`). */
const COMMON_TERM_MINIMUM_CHUNKS = 1_000;

interface DocumentRow {
  id: number;
  path: string;
  title: string;
  format: DocumentFormat;
  chunk_count: number;
  size_bytes: number;
  added_at: string;
}

function toDocument(row: DocumentRow): KnowledgeBaseDocument {
  return {
    id: row.id,
    path: row.path,
    title: row.title,
    format: row.format,
    chunks: row.chunk_count,
    bytes: row.size_bytes,
    addedAt: row.added_at,
  };
}

function isHidden(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

function hasKnowledgeBaseExtension(path: string): boolean {
  const lower = path.toLowerCase();
  return KNOWLEDGE_BASE_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/**
 * A local full-text knowledge base in one SQLite file: documents (files you add) cut into
 * chunks, indexed with FTS5 (porter stemming over unicode61, diacritics folded; CJK characters
 * indexed one by one) and ranked with bm25. WAL mode lets the CLI add files while a worker
 * searches. Open it once per process and share the instance; it is synchronous underneath, so
 * calls never interleave.
 */
export class KnowledgeBase {
  private readonly maxFileBytes: number;
  private readonly chunking: ChunkTextOptions;
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    /** The SQLite file. */
    readonly filePath: string,
    private readonly database: Database.Database,
    options: KnowledgeBaseOptions,
  ) {
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAXIMUM_DOCUMENT_BYTES;
    this.chunking = options.chunking ?? {};
  }

  /** A prepared statement, prepared once per connection. */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Opens the knowledge base at `filePath`, creating the file, its folder and the schema when
   * missing (an empty knowledge base). Use `':memory:'` for a throwaway one.
   */
  static open(filePath: string, options: KnowledgeBaseOptions = {}): KnowledgeBase {
    const inMemory = filePath === ':memory:';
    const absolutePath = inMemory ? filePath : resolve(filePath);
    if (!inMemory) mkdirSync(dirname(absolutePath), { recursive: true });
    const database = new Database(absolutePath);
    try {
      database.pragma('busy_timeout = 5000');
      if (!inMemory) database.pragma('journal_mode = WAL');
      database.pragma('synchronous = NORMAL');
      database.pragma('foreign_keys = ON');
      KnowledgeBase.createSchema(database);
    } catch (error) {
      database.close();
      throw error;
    }
    return new KnowledgeBase(absolutePath, database, options);
  }

  private static createSchema(database: Database.Database): void {
    const version = database.pragma('user_version', { simple: true }) as number;
    if (version === SCHEMA_VERSION) return;
    if (version !== 0)
      throw new Error(
        `The knowledge base has schema version ${version}; this program knows version ${SCHEMA_VERSION}.`,
      );
    database.exec(`
      CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        format TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        content_sha256 TEXT NOT NULL,
        chunk_count INTEGER NOT NULL,
        added_at TEXT NOT NULL
      );
      CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        position INTEGER NOT NULL
      );
      CREATE INDEX chunks_by_document ON chunks(document_id);
      CREATE VIRTUAL TABLE chunk_index USING fts5(title, body, tokenize = 'porter unicode61 remove_diacritics 2');
      PRAGMA user_version = ${SCHEMA_VERSION};
    `);
  }

  /**
   * Adds files and folders. Folders are walked recursively (hidden entries and symbolic links
   * inside them skipped) for md, markdown, txt, html, htm, pdf, docx, csv and json files. A file
   * already present with the same content is left alone; one whose content changed has its
   * chunks replaced. Files that cannot be read are reported as `failed`, the rest still added.
   */
  async add(paths: readonly string[], options: AddOptions = {}): Promise<KnowledgeBaseAddResult> {
    const result: KnowledgeBaseAddResult = {
      added: 0,
      updated: 0,
      unchanged: 0,
      failed: 0,
      chunksWritten: 0,
      files: [],
    };
    const record = (outcome: KnowledgeBaseFileOutcome) => {
      result.files.push(outcome);
      result[outcome.status] += 1;
      if (outcome.status === 'added' || outcome.status === 'updated') result.chunksWritten += outcome.chunks ?? 0;
      options.onFile?.(outcome);
    };
    for await (const file of this.filesToAdd(paths, record)) {
      options.signal?.throwIfAborted();
      record(await this.addFile(file));
    }
    return result;
  }

  /** The files under `paths`, real paths, each once; problems with a given path are recorded as failures. */
  private async *filesToAdd(
    paths: readonly string[],
    record: (outcome: KnowledgeBaseFileOutcome) => void,
  ): AsyncGenerator<string> {
    const seen = new Set<string>();
    const walk = async function* (folder: string): AsyncGenerator<string> {
      let entries;
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch (error) {
        record({ path: folder, status: 'failed', reason: `folder not readable: ${(error as Error).message}` });
        return;
      }
      entries.sort((left, right) => left.name.localeCompare(right.name));
      for (const entry of entries) {
        if (isHidden(entry.name)) continue;
        const path = join(folder, entry.name);
        if (entry.isDirectory()) yield* walk(path);
        else if (entry.isFile() && hasKnowledgeBaseExtension(entry.name)) yield path;
      }
    };
    for (const given of paths) {
      const absolute = resolve(given);
      let real: string;
      try {
        real = await realpath(absolute);
      } catch (error) {
        record({
          path: absolute,
          status: 'failed',
          reason:
            (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (error as Error).message,
        });
        continue;
      }
      const information = await stat(real);
      const files = information.isDirectory()
        ? walk(real)
        : (async function* () {
            yield real;
          })();
      // Paths are real: the given one was resolved and the walk does not follow symbolic links.
      for await (const file of files) {
        if (seen.has(file)) continue;
        seen.add(file);
        yield file;
      }
    }
  }

  private async addFile(path: string): Promise<KnowledgeBaseFileOutcome> {
    try {
      const information = await stat(path);
      if (information.size > this.maxFileBytes) {
        return {
          path,
          status: 'failed',
          reason: `${information.size.toLocaleString('en-US')} bytes, over the ${this.maxFileBytes.toLocaleString('en-US')}-byte limit`,
        };
      }
      const bytes = await readFile(path);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const existing = this.statement('SELECT id, content_sha256, chunk_count FROM documents WHERE path = ?').get(
        path,
      ) as { id: number; content_sha256: string; chunk_count: number } | undefined;
      if (existing?.content_sha256 === sha256) return { path, status: 'unchanged', chunks: existing.chunk_count };
      const document = await extractTextFromBytes(bytes, path, { maxBytes: this.maxFileBytes });
      if (!document.text.trim())
        return { path, status: 'failed', reason: 'no text could be extracted (a scanned PDF would need OCR)' };
      const chunks = this.storeDocument({
        path,
        title: document.title ?? basename(path),
        format: document.format,
        text: document.text,
        bytes: bytes.byteLength,
        sha256,
      });
      return { path, status: existing ? 'updated' : 'added', chunks };
    } catch (error) {
      if (error instanceof DocumentExtractionError) return { path, status: 'failed', reason: error.message };
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM' || code === 'ENOENT')
        return { path, status: 'failed', reason: (error as Error).message };
      throw error;
    }
  }

  /**
   * Adds (or replaces) a document from text already in hand, e.g. a fetched page. `path` is its
   * key: a file path or a URL. Returns the number of chunks stored.
   */
  addText(document: { path: string; title: string; text: string; format?: DocumentFormat }): number {
    const bytes = Buffer.byteLength(document.text);
    const sha256 = createHash('sha256').update(document.text).digest('hex');
    return this.storeDocument({
      path: document.path,
      title: document.title,
      format: document.format ?? 'text',
      text: document.text,
      bytes,
      sha256,
    });
  }

  private storeDocument(document: {
    path: string;
    title: string;
    format: DocumentFormat;
    text: string;
    bytes: number;
    sha256: string;
  }): number {
    const chunks = chunkText(document.text, this.chunking);
    const indexedTitle = spaceOutCjkCharacters(document.title);
    const store = this.database.transaction(() => {
      const existing = this.statement('SELECT id FROM documents WHERE path = ?').get(document.path) as
        { id: number } | undefined;
      if (existing) this.deleteDocument(existing.id);
      const { lastInsertRowid } = this.statement(
        'INSERT INTO documents (path, title, format, size_bytes, content_sha256, chunk_count, added_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        document.path,
        document.title,
        document.format,
        document.bytes,
        document.sha256,
        chunks.length,
        new Date().toISOString(),
      );
      const insertChunk = this.statement('INSERT INTO chunks (document_id, position) VALUES (?, ?)');
      const indexChunk = this.statement(
        'INSERT INTO chunk_index (rowid, title, body) VALUES (CAST(? AS INTEGER), ?, ?)',
      );
      chunks.forEach((chunk, position) => {
        const chunkId = insertChunk.run(lastInsertRowid, position).lastInsertRowid;
        indexChunk.run(chunkId, indexedTitle, spaceOutCjkCharacters(chunk));
      });
    });
    store.immediate();
    return chunks.length;
  }

  /** Deletes a document's index entries, chunks and row (inside the caller's transaction). */
  private deleteDocument(documentId: number): void {
    this.statement('DELETE FROM chunk_index WHERE rowid IN (SELECT id FROM chunks WHERE document_id = ?)').run(
      documentId,
    );
    this.statement('DELETE FROM chunks WHERE document_id = ?').run(documentId);
    this.statement('DELETE FROM documents WHERE id = ?').run(documentId);
  }

  /** All documents, by path. */
  list(): KnowledgeBaseDocument[] {
    return (
      this.statement(
        'SELECT id, path, title, format, chunk_count, size_bytes, added_at FROM documents ORDER BY path',
      ).all() as DocumentRow[]
    ).map(toDocument);
  }

  /** Number of documents and chunks. */
  statistics(): { documents: number; chunks: number } {
    return this.statement(
      'SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM chunks) AS chunks',
    ).get() as { documents: number; chunks: number };
  }

  /**
   * Removes a document by id (a number, or a string of digits) or by path; a folder path removes
   * every document under it. Relative paths are resolved against the current directory.
   * Returns the removed documents (empty when nothing matched).
   */
  remove(pathOrId: string | number): KnowledgeBaseDocument[] {
    const select = 'SELECT id, path, title, format, chunk_count, size_bytes, added_at FROM documents';
    let rows: DocumentRow[];
    if (typeof pathOrId === 'number' || /^\d+$/.test(pathOrId.trim())) {
      rows = this.statement(`${select} WHERE id = ?`).all(Number(pathOrId)) as DocumentRow[];
    } else {
      const candidates = new Set([pathOrId, resolve(pathOrId)]);
      try {
        candidates.add(realpathSync(resolve(pathOrId)));
      } catch {
        // a file that is gone can still be removed by the path it was added under
      }
      rows = [];
      for (const candidate of candidates) {
        const folderPrefix = candidate.endsWith(sep) ? candidate : candidate + sep;
        rows.push(
          ...(this.statement(`${select} WHERE path = ? OR substr(path, 1, ?) = ?`).all(
            candidate,
            folderPrefix.length,
            folderPrefix,
          ) as DocumentRow[]),
        );
      }
      rows = [...new Map(rows.map((row) => [row.id, row])).values()];
    }
    const removeAll = this.database.transaction(() => rows.forEach((row) => this.deleteDocument(row.id)));
    removeAll.immediate();
    return rows.map(toDocument);
  }

  /**
   * The query terms worth matching. In bm25 a term found in more than half of the chunks has an
   * idf of zero (FTS5 clamps it to 1e-6), so it changes no score, yet making every chunk that
   * contains it a candidate is most of the cost of a query. In an index of at least
   * {@link COMMON_TERM_MINIMUM_CHUNKS} chunks such terms are left out of the match when rarer ones
   * remain, as Elasticsearch's `cutoff_frequency` does; only chunks that match nothing but them,
   * whose score would be about zero, drop out of the results.
   */
  private termsWorthMatching(terms: string[]): string[] {
    if (terms.length < 2) return terms;
    const { chunks } = this.statement('SELECT count(*) AS chunks FROM chunks').get() as { chunks: number };
    if (chunks < COMMON_TERM_MINIMUM_CHUNKS) return terms;
    const half = Math.floor(chunks / 2);
    const countUpTo = this.statement(
      'SELECT count(*) AS matches FROM (SELECT 1 FROM chunk_index WHERE chunk_index MATCH ? LIMIT ?)',
    );
    const rarer = terms.filter((term) => (countUpTo.get(term, half + 1) as { matches: number }).matches <= half);
    return rarer.length ? rarer : terms;
  }

  /**
   * The documents that best match `query`, best first, one result per document (its best
   * chunk). Any text is accepted: quotes, operators and punctuation are escaped, never parsed.
   */
  search(query: string, limit = 5): KnowledgeBaseSearchResult[] {
    const terms = fullTextQueryTerms(query);
    if (terms.length === 0 || limit <= 0) return [];
    // One read transaction: a consistent view while another process adds or removes files.
    const read = this.database.transaction((): KnowledgeBaseSearchResult[] => {
      const expression = this.termsWorthMatching(terms).join(' OR ');
      // Rank first, cheaply (no snippets), then make snippets only for the chunks shown.
      const candidates = this.statement(
        `SELECT rowid AS chunk_id, bm25(chunk_index, ${TITLE_WEIGHT}, 1) AS bm25_score
           FROM chunk_index WHERE chunk_index MATCH ? ORDER BY bm25_score LIMIT ?`,
      ).all(expression, limit * 4) as Array<{ chunk_id: number; bm25_score: number }>;
      const documentOfChunk = this.statement(
        'SELECT documents.id AS document_id, documents.title AS title, documents.path AS path FROM chunks JOIN documents ON documents.id = chunks.document_id WHERE chunks.id = ?',
      );
      // better-sqlite3 binds JS numbers as REAL, and FTS5 ignores a REAL rowid next to MATCH: hence the CAST.
      const snippetOfChunk = this.statement(
        `SELECT snippet(chunk_index, 1, '**', '**', '…', ${SNIPPET_TOKENS}) AS snippet FROM chunk_index WHERE chunk_index MATCH ? AND rowid = CAST(? AS INTEGER)`,
      );
      const results: KnowledgeBaseSearchResult[] = [];
      const documentsSeen = new Set<number>();
      for (const candidate of candidates) {
        const document = documentOfChunk.get(candidate.chunk_id) as
          { document_id: number; title: string; path: string } | undefined;
        if (!document || documentsSeen.has(document.document_id)) continue;
        documentsSeen.add(document.document_id);
        const { snippet } = (snippetOfChunk.get(expression, candidate.chunk_id) as { snippet: string } | undefined) ?? {
          snippet: '',
        };
        results.push({
          documentId: document.document_id,
          title: document.title,
          path: document.path,
          snippet: joinCjkCharacters(snippet).replace(/\s+/g, ' ').trim(),
          score: Number((-candidate.bm25_score).toPrecision(4)),
        });
        if (results.length >= limit) break;
      }
      return results;
    });
    return read.deferred();
  }

  close(): void {
    this.database.close();
  }
}
