import { crc32, inflateRawSync } from 'node:zlib';
import { DocumentExtractionError } from './document-extraction-error';

/** One file of a ZIP archive as its central directory describes it. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated; anything else cannot be read. */
  method: number;
  /** General-purpose flags; bit 0 means encrypted. */
  flags: number;
  compressedSize: number;
  /** What the archive claims the file inflates to (a hostile archive may lie). */
  uncompressedSize: number;
  localHeaderOffset: number;
}

/** Limits of {@link readZipWithinLimits}. */
export interface ZipLimits {
  /** Most bytes the files read may inflate to, all together. */
  maxInflatedBytes: number;
  /** Most files the archive may list. */
  maxEntries: number;
}

/** Default of {@link ZipLimits.maxEntries}: far more than any Office file holds (a few dozen). */
export const DEFAULT_MAXIMUM_ZIP_ENTRIES = 10_000;

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

function megabytes(bytes: number): string {
  return `${Number((bytes / (1024 * 1024)).toFixed(1))} MB`;
}

function damaged(name: string, why: string): DocumentExtractionError {
  return new DocumentExtractionError('unreadable', `Cannot read ${name}: its ZIP structure is damaged (${why}).`);
}

/** The offset of the end-of-central-directory record, searched from the end (it may be followed by a comment). */
function endOfCentralDirectory(bytes: Buffer, name: string): number {
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let offset = bytes.length - 22; offset >= lowest; offset -= 1) {
    if (bytes.readUInt32LE(offset) === END_OF_CENTRAL_DIRECTORY) return offset;
  }
  throw damaged(name, 'no end of central directory');
}

/**
 * The entries a ZIP archive's central directory lists, without inflating anything.
 * @throws DocumentExtractionError `unreadable` for a damaged archive or ZIP64 (only needed past
 *   4 GB), `too-large` for more than `maxEntries` entries.
 */
export function readZipEntries(bytes: Buffer, name: string, maxEntries = DEFAULT_MAXIMUM_ZIP_ENTRIES): ZipEntry[] {
  if (bytes.length < 22) throw damaged(name, 'too short');
  const end = endOfCentralDirectory(bytes, name);
  const count = bytes.readUInt16LE(end + 10);
  const directorySize = bytes.readUInt32LE(end + 12);
  const directoryOffset = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || directoryOffset === 0xffffffff || directorySize === 0xffffffff) {
    throw new DocumentExtractionError(
      'unreadable',
      `Cannot read ${name}: it is a ZIP64 archive, which only files past 4 GB need.`,
    );
  }
  if (count > maxEntries)
    throw new DocumentExtractionError(
      'too-large',
      `${name} is too large to read: its archive lists ${count.toLocaleString('en-US')} files, over the limit of ${maxEntries.toLocaleString('en-US')}.`,
    );
  if (directoryOffset + directorySize > end) throw damaged(name, 'the central directory lies outside the file');
  const entries: ZipEntry[] = [];
  let offset = directoryOffset;
  for (let index = 0; index < count; index += 1) {
    if (offset + 46 > end || bytes.readUInt32LE(offset) !== CENTRAL_DIRECTORY_HEADER)
      throw damaged(name, `entry ${index + 1} of the central directory`);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    const entry: ZipEntry = {
      name: bytes.toString('utf8', offset + 46, offset + 46 + nameLength),
      flags: bytes.readUInt16LE(offset + 8),
      method: bytes.readUInt16LE(offset + 10),
      compressedSize: bytes.readUInt32LE(offset + 20),
      uncompressedSize: bytes.readUInt32LE(offset + 24),
      localHeaderOffset: bytes.readUInt32LE(offset + 42),
    };
    if (
      entry.compressedSize === 0xffffffff ||
      entry.uncompressedSize === 0xffffffff ||
      entry.localHeaderOffset === 0xffffffff
    ) {
      throw new DocumentExtractionError(
        'unreadable',
        `Cannot read ${name}: it is a ZIP64 archive, which only files past 4 GB need.`,
      );
    }
    entries.push(entry);
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The compressed bytes of an entry (after its local header). */
function entryData(bytes: Buffer, entry: ZipEntry, name: string): Buffer {
  const header = entry.localHeaderOffset;
  if (header + 30 > bytes.length || bytes.readUInt32LE(header) !== LOCAL_FILE_HEADER)
    throw damaged(name, `the local header of ${entry.name}`);
  const start = header + 30 + bytes.readUInt16LE(header + 26) + bytes.readUInt16LE(header + 28);
  if (start + entry.compressedSize > bytes.length) throw damaged(name, `${entry.name} runs past the end of the file`);
  return bytes.subarray(start, start + entry.compressedSize);
}

function inflatesPast(name: string, maxInflatedBytes: number): DocumentExtractionError {
  return new DocumentExtractionError(
    'too-large',
    `${name} is too large to read: it inflates past ${megabytes(maxInflatedBytes)} (the limit for the unpacked parts of a document).`,
  );
}

/**
 * Inflates the files of a ZIP archive that `wanted` picks, within `maxInflatedBytes` for all of
 * them together. The sizes the central directory declares are checked first (nothing is
 * inflated when they are over), then the limit is enforced while inflating, since a hostile
 * archive may declare less than it holds. Files `wanted` rejects are listed with no content.
 *
 * @throws DocumentExtractionError `too-large` past a limit, `unreadable` for a damaged,
 *   encrypted or oddly compressed archive.
 */
export function readZipWithinLimits(
  bytes: Buffer,
  name: string,
  limits: ZipLimits,
  wanted: (entryName: string) => boolean,
): Map<string, Buffer> {
  const entries = readZipEntries(bytes, name, limits.maxEntries);
  const read = entries.filter((entry) => wanted(entry.name));
  const declared = read.reduce((total, entry) => total + entry.uncompressedSize, 0);
  if (declared > limits.maxInflatedBytes) throw inflatesPast(name, limits.maxInflatedBytes);
  const files = new Map<string, Buffer>();
  let inflated = 0;
  for (const entry of entries) {
    if (!wanted(entry.name)) {
      files.set(entry.name, Buffer.alloc(0));
      continue;
    }
    if (entry.flags & 1) throw new DocumentExtractionError('unreadable', `Cannot read ${name}: it is encrypted.`);
    const data = entryData(bytes, entry, name);
    const remaining = limits.maxInflatedBytes - inflated;
    let content: Buffer;
    if (entry.method === 0) {
      content = data;
    } else if (entry.method === 8) {
      try {
        // maxOutputLength stops zlib as soon as the output would pass what is left of the limit.
        content = inflateRawSync(data, { maxOutputLength: Math.max(1, remaining) });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
          throw inflatesPast(name, limits.maxInflatedBytes);
        throw damaged(name, `${entry.name} does not inflate: ${(error as Error).message}`);
      }
    } else {
      throw new DocumentExtractionError(
        'unreadable',
        `Cannot read ${name}: ${entry.name} uses ZIP compression method ${entry.method}, which is not supported.`,
      );
    }
    if (content.length > remaining) throw inflatesPast(name, limits.maxInflatedBytes);
    inflated += content.length;
    files.set(entry.name, content);
  }
  return files;
}

/**
 * A ZIP archive of `files` stored without compression (method 0), for a reader (mammoth) that
 * must see only what {@link readZipWithinLimits} inflated.
 */
export function storedZip(files: ReadonlyMap<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of files) {
    const encodedName = Buffer.from(name, 'utf8');
    const checksum = crc32(content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_FILE_HEADER, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt32LE(checksum, 14);
    local.writeUInt32LE(content.length, 18);
    local.writeUInt32LE(content.length, 22);
    local.writeUInt16LE(encodedName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_DIRECTORY_HEADER, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(checksum, 16);
    central.writeUInt32LE(content.length, 20);
    central.writeUInt32LE(content.length, 24);
    central.writeUInt16LE(encodedName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, encodedName, content);
    centrals.push(central, encodedName);
    offset += 30 + encodedName.length + content.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(files.size, 8);
  end.writeUInt16LE(files.size, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
