import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
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
        children: [new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }), ...paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] }))],
      },
    ],
  });
  return Packer.toBuffer(document);
}

/** A tool context for calling a tool's `run` directly; records heartbeats. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext & { heartbeats: unknown[] } {
  const heartbeats: unknown[] = [];
  return { signal, heartbeat: (details) => heartbeats.push(details), workflowId: 'wf-test', callId: 'call-1-1', heartbeats };
}
