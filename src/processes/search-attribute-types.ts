import { temporal } from '@temporalio/proto';

/** Search-attribute types `temporal server start-dev --search-attribute` accepts. */
export type SearchAttributeType = 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

const SEARCH_ATTRIBUTE_TYPES: ReadonlySet<string> = new Set([
  'Text',
  'Keyword',
  'Int',
  'Double',
  'Bool',
  'Datetime',
  'KeywordList',
]);

/** Each type's value in Temporal's API, for `addSearchAttributes`. */
export const INDEXED_VALUE_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Text: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** A TypeError when a name is not an identifier or a type is not one of {@link SearchAttributeType}. */
export function checkSearchAttributes(searchAttributes: Readonly<Record<string, string>>): void {
  for (const [name, type] of Object.entries(searchAttributes)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new TypeError(`DevServer: search attribute name ${JSON.stringify(name)} is not an identifier`);
    if (!SEARCH_ATTRIBUTE_TYPES.has(type)) {
      throw new TypeError(
        `DevServer: search attribute ${name} has type ${JSON.stringify(type)}; use one of ${[...SEARCH_ATTRIBUTE_TYPES].join(', ')}`,
      );
    }
  }
}
