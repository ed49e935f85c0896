import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { ToolContext } from '../../activities/tools/tool-definition';

/** A real PDF (made with pdf-lib): one page per entry of `pages`, each line drawn as text. */
export async function makePdf(pages: string[][], title?: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  if (title) pdf.setTitle(title);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 780 - index * 18, size: 12, font }));
  }
  return pdf.save();
}

/** A real Word document (made with docx): a heading, then one paragraph per entry. */
export async function makeDocx(heading: string, paragraphs: string[]): Promise<Buffer> {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
          ...paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

/** A tool context for calling a tool's `run` directly; records heartbeats. */
export function toolContext(
  signal: AbortSignal = new AbortController().signal,
): ToolContext & { heartbeats: unknown[] } {
  const heartbeats: unknown[] = [];
  return {
    signal,
    heartbeat: (details) => heartbeats.push(details),
    workflowId: 'wf-test',
    callId: 'call-1-1',
    heartbeats,
  };
}

/** One file of {@link deflatedZip}. */
export interface ZipFile {
  name: string;
  content: Buffer;
  /** The size the archive claims the file inflates to; default the true size (a bomb may lie). */
  declaredSize?: number;
}

/** A ZIP archive of `files`, each deflated (written here, independently of the product's ZIP reader). */
export function deflatedZip(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const data = deflateRawSync(file.content, { level: 9 });
    const size = file.declaredSize ?? file.content.length;
    const header = (signature: number, length: number) => {
      const buffer = Buffer.alloc(length);
      buffer.writeUInt32LE(signature, 0);
      return buffer;
    };
    const local = header(0x04034b50, 30);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc32(file.content), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = header(0x02014b50, 46);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc32(file.content), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/**
 * A Word document bomb: a few hundred KB that inflate to `inflatedMegabytes` of paragraphs in
 * word/document.xml. `declaredSize` makes the archive lie about that part's size.
 */
export function docxBomb(inflatedMegabytes: number, declaredSize?: number): Buffer {
  const paragraph = '<w:p><w:r><w:t>All work and no play makes Jack a dull boy.</w:t></w:r></w:p>';
  const body = paragraph.repeat(Math.ceil((inflatedMegabytes * 1024 * 1024) / paragraph.length));
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;
  return deflatedZip([
    {
      name: '[Content_Types].xml',
      content: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      content: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      content: Buffer.from(document),
      ...(declaredSize !== undefined ? { declaredSize } : {}),
    },
  ]);
}

/** A one-page PDF whose content stream is `inflatedMegabytes` of spaces, deflated (a PDF bomb). */
export function pdfBomb(inflatedMegabytes: number): Buffer {
  const stream = deflateSync(Buffer.alloc(inflatedMegabytes * 1024 * 1024, 0x20), { level: 9 });
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>'),
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
  ];
  const parts = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = (parts[0] as Buffer).length;
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(object);
    length += object.length;
  });
  const entries = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}
