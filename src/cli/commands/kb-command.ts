import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { formatSearchResults } from '../../domain/format-search-results';
import type * as KnowledgeBaseModule from '../../knowledge-base/knowledge-base';
import type { KnowledgeBase, KnowledgeBaseFileOutcome } from '../../knowledge-base/knowledge-base';
import { loadKnowledgeBasePath } from '../../config';
import { UsageError } from '../usage-error';

export const kbHelp = `Usage: react-agent kb <add|list|remove|search> ...

The local knowledge base that the search tool uses (REACT_AGENT_SEARCH_BACKEND=local, the
default): a SQLite full-text index of your files.

  react-agent kb add <files or folders...>   index files (md, txt, html, pdf, docx, csv, json);
                                             folders are walked; changed files are re-indexed
  react-agent kb list                        the documents: id, chunks, format, title, path
  react-agent kb remove <path|id>            remove a document (a folder path removes all under it)
  react-agent kb search "QUERY" [--limit N]  what the search tool would find (default 5 results)

Example: react-agent kb add samples/knowledge-base && react-agent kb search "BYD 2024 sales"

The file is REACT_AGENT_KNOWLEDGE_BASE (default <REACT_AGENT_DATA_DIR or .data>/knowledge-base.sqlite).`;

/** A path as the user would like to read it: relative to the current folder when inside it. */
function displayPath(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere && !fromHere.startsWith('..') ? fromHere : path;
}

function describeOutcome(outcome: KnowledgeBaseFileOutcome): string {
  const chunks = outcome.chunks === undefined ? '' : ` (${outcome.chunks} chunk${outcome.chunks === 1 ? '' : 's'})`;
  const reason = outcome.reason ? `: ${outcome.reason}` : '';
  return `${outcome.status.padEnd(9)} ${displayPath(outcome.path)}${chunks}${reason}`;
}

async function add(knowledgeBase: KnowledgeBase, paths: string[]): Promise<number> {
  if (paths.length === 0) throw new UsageError('kb add needs files or folders to add.', kbHelp);
  const result = await knowledgeBase.add(paths, { onFile: (outcome) => console.log(describeOutcome(outcome)) });
  const { documents, chunks } = knowledgeBase.statistics();
  console.log(
    `\n${result.added} added, ${result.updated} updated, ${result.unchanged} unchanged, ${result.failed} failed; ` +
      `${result.chunksWritten} chunks written. The knowledge base ${displayPath(knowledgeBase.filePath)} holds ${documents} documents in ${chunks} chunks.`,
  );
  if (result.files.length === 0)
    console.log('No files found to add (looked for .md, .txt, .html, .pdf, .docx, .csv and .json files).');
  return result.failed > 0 && result.added + result.updated + result.unchanged === 0 ? 1 : 0;
}

function list(knowledgeBase: KnowledgeBase): number {
  const documents = knowledgeBase.list();
  if (documents.length === 0) {
    console.log(
      `The knowledge base ${displayPath(knowledgeBase.filePath)} is empty. Add files with: react-agent kb add <files or folders>`,
    );
    return 0;
  }
  console.log(['ID', 'CHUNKS', 'FORMAT', 'TITLE', 'PATH'].join('\t'));
  for (const document of documents) {
    console.log([document.id, document.chunks, document.format, document.title, displayPath(document.path)].join('\t'));
  }
  const { chunks } = knowledgeBase.statistics();
  console.log(`\n${documents.length} documents, ${chunks} chunks in ${displayPath(knowledgeBase.filePath)}.`);
  return 0;
}

function remove(knowledgeBase: KnowledgeBase, targets: string[]): number {
  if (targets.length !== 1) throw new UsageError('kb remove needs one path or document id (see kb list).', kbHelp);
  const removed = knowledgeBase.remove(targets[0] as string);
  if (removed.length === 0) {
    console.error(`Nothing in the knowledge base matches ${JSON.stringify(targets[0])}; see react-agent kb list.`);
    return 1;
  }
  for (const document of removed) console.log(`removed   ${document.id}\t${displayPath(document.path)}`);
  console.log(`\n${removed.length} document${removed.length === 1 ? '' : 's'} removed.`);
  return 0;
}

function search(knowledgeBase: KnowledgeBase, words: string[], limitText: string): number {
  const query = words.join(' ').trim();
  if (!query) throw new UsageError('kb search needs a query, e.g. react-agent kb search "BYD 2024 sales".', kbHelp);
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit <= 0)
    throw new UsageError(`--limit must be a positive integer, got ${JSON.stringify(limitText)}.`, kbHelp);
  const results = knowledgeBase.search(query, limit).map((hit) => ({ ...hit, path: displayPath(hit.path) }));
  console.log(formatSearchResults(query, 'local knowledge base', results));
  return 0;
}

export async function kbCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { limit: { type: 'string', default: '5' } },
  });
  const [action, ...rest] = positionals;
  if (!action) throw new UsageError('kb needs an action: add, list, remove or search.', kbHelp);
  if (!['add', 'list', 'remove', 'search'].includes(action))
    throw new UsageError(`Unknown kb action "${action}".`, kbHelp);
  if (action === 'add' && rest.length === 0) throw new UsageError('kb add needs files or folders to add.', kbHelp);
  // Loaded here, not at the top: the document parsers take half a second to load, which the other commands need not pay.
  const { KnowledgeBase: KnowledgeBaseClass } =
    require('../../knowledge-base/knowledge-base') as typeof KnowledgeBaseModule;
  const knowledgeBase = KnowledgeBaseClass.open(loadKnowledgeBasePath());
  try {
    switch (action) {
      case 'add':
        return await add(knowledgeBase, rest);
      case 'list':
        return list(knowledgeBase);
      case 'remove':
        return remove(knowledgeBase, rest);
      default:
        return search(knowledgeBase, rest, values.limit);
    }
  } finally {
    knowledgeBase.close();
  }
}
