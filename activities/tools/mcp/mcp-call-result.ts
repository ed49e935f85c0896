/** One item of a `tools/call` result's `content`, as the MCP specification defines them. */
type ContentItem = { type: string; [key: string]: unknown };

/** What a `tools/call` answered (the SDK's CallToolResult, loosely: older servers send `toolResult`). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  toolResult?: unknown;
}

function size(base64: unknown): string {
  const bytes = typeof base64 === 'string' ? Math.floor((base64.replace(/=+$/, '').length * 3) / 4) : 0;
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
}

function describeResource(resource: Record<string, unknown>): string {
  const uri = typeof resource.uri === 'string' ? resource.uri : 'a resource';
  const mimeType = typeof resource.mimeType === 'string' ? `, ${resource.mimeType}` : '';
  if (typeof resource.text === 'string') return `[resource ${uri}${mimeType}]\n${resource.text}`;
  if (typeof resource.blob === 'string')
    return `[resource ${uri}${mimeType}: ${size(resource.blob)} of binary data, left out]`;
  return `[resource ${uri}${mimeType}: no content]`;
}

/** One content item as text the model can use, or a note of what was left out. */
export function contentItemText(item: ContentItem): string {
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio':
      // The model gets text only: it learns that there was one, what kind and how big.
      return `[${item.type}: ${typeof item.mimeType === 'string' ? item.mimeType : 'unknown type'}, ${size(item.data)}, not shown: this agent passes text only]`;
    case 'resource':
      return typeof item.resource === 'object' && item.resource !== null
        ? describeResource(item.resource as Record<string, unknown>)
        : '[resource: no content]';
    case 'resource_link': {
      const name = typeof item.name === 'string' ? item.name : 'resource';
      const parts = [
        typeof item.mimeType === 'string' ? item.mimeType : undefined,
        typeof item.description === 'string' ? item.description : undefined,
      ].filter(Boolean);
      return `[resource link: ${name} <${String(item.uri)}>${parts.length ? ` (${parts.join('; ')})` : ''}]`;
    }
    default:
      return `[content of type ${JSON.stringify(item.type)} left out]`;
  }
}

/**
 * The observation text of a call's result: its content items in order (text as is; images, audio
 * and binary resources as notes of what was left out; text resources and links described), or
 * the structured content as JSON when there is no text. `isError` says the tool itself failed.
 */
export function callResultText(result: McpCallResult): { text: string; isError: boolean } {
  const isError = result.isError === true;
  const items = Array.isArray(result.content)
    ? (result.content as unknown[]).filter(
        (item): item is ContentItem =>
          typeof item === 'object' && item !== null && typeof (item as ContentItem).type === 'string',
      )
    : [];
  const parts = items.map(contentItemText).filter((part) => part !== '');
  const hasText = items.some((item) => item.type === 'text' && typeof item.text === 'string' && item.text !== '');
  if (!hasText && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  if (parts.length === 0 && result.toolResult !== undefined)
    parts.push(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult, null, 2));
  const text = parts.join('\n\n');
  return { text: text === '' ? '(the tool returned no content)' : text, isError };
}
