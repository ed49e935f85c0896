import { Readability } from '@mozilla/readability';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import TurndownService from 'turndown';

export interface ReadablePage {
  /** The page title (from Readability, else <title>). */
  title: string;
  /** The main content as markdown. */
  markdown: string;
  /** True when Readability found an article; false means the whole body was converted. */
  isArticle: boolean;
}

// linkedom ships CommonJS at run time but only ESM typings.
const { parseHTML } = require('linkedom') as typeof Linkedom;

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'iframe', 'svg', 'canvas', 'form'] as never);

/**
 * Readable markdown from an HTML page: Readability picks the main content (as Firefox's reader
 * view does), turndown writes it as markdown. Falls back to the whole body when the page has
 * no article-like content. Never throws on malformed HTML.
 */
export function htmlToMarkdown(html: string, url = 'http://localhost/'): ReadablePage {
  const { document } = parseHTML(html);
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  let article: { title?: string | null; content?: string | null } | null;
  try {
    const clone = parseHTML(html).document;
    Object.defineProperty(clone, 'baseURI', { value: url });
    article = new Readability(clone as never, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const content = article?.content || document.body?.innerHTML || html;
  const markdown = turndown
    .turndown(content)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title: (article?.title ?? fallbackTitle).trim(), markdown, isArticle: Boolean(article?.content) };
}
