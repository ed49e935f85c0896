/** Why a document's text could not be extracted. */
export type DocumentExtractionProblem =
  /** The file type is not one we read (a spreadsheet, an image, an archive, an old .doc, ...). */
  | 'unsupported'
  /** The file is larger than the size cap. */
  | 'too-large'
  /** The file claims a format but its content is damaged or not what the name says. */
  | 'unreadable';

/**
 * A document whose text cannot be extracted, for a reason retrying will not change. The message
 * says what the file is and what to do instead; callers show it as is (a tool turns it into a
 * `ToolInputError`, the knowledge base lists the file as failed).
 */
export class DocumentExtractionError extends Error {
  override readonly name = 'DocumentExtractionError';

  constructor(
    readonly problem: DocumentExtractionProblem,
    message: string,
  ) {
    super(message);
  }
}
