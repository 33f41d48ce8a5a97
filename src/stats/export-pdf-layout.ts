// The page of the PDF report (A4, margins, colours, the standard fonts) and what every part of it
// draws with: number and date formats, section titles, paragraphs that flow onto a new page.
export const PAGE = { width: 595.28, height: 841.89 }; // A4 in points
export const MARGIN = 48;
export const CONTENT_WIDTH = PAGE.width - 2 * MARGIN;
export const FOOTER_Y = PAGE.height - 34;
export const BOTTOM = PAGE.height - 60;

export const COLOR = {
  text: '#111827',
  muted: '#6b7280',
  faint: '#9ca3af',
  rule: '#e5e7eb',
  panel: '#f9fafb',
  accent: '#2563eb',
  inbox: '#16a34a',
  spam: '#dc2626',
};

export const FONT = { regular: 'Helvetica', bold: 'Helvetica-Bold' };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export type Doc = PDFKit.PDFDocument;

export function formatDay(day: string, withYear = true): string {
  const [year, month, date] = day.split('-');
  return `${Number(date)} ${MONTHS[Number(month) - 1]}${withYear ? ` ${year}` : ''}`;
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** "1 reply", "3 replies". */
export function countOf(value: number, one: string, many: string): string {
  return `${formatCount(value)} ${value === 1 ? one : many}`;
}

export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}

/**
 * The text cut to fit `width` in the current font, with an ellipsis. pdfkit would wrap a long
 * word (an email address) onto a second line instead, even with lineBreak off.
 */
export function fit(doc: Doc, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (doc.widthOfString(`${text.slice(0, middle)}…`) <= width) low = middle;
    else high = middle - 1;
  }
  return `${text.slice(0, low)}…`;
}

export function sectionTitle(doc: Doc, title: string, subtitle: string, top: number): number {
  doc.font(FONT.bold).fontSize(12).fillColor(COLOR.text).text(title, MARGIN, top);
  doc
    .font(FONT.regular)
    .fontSize(8.5)
    .fillColor(COLOR.muted)
    .text(subtitle, MARGIN, top + 16, { width: CONTENT_WIDTH });
  // a subtitle that wraps pushes what follows down (it once ran into the next line)
  return Math.max(top + 34, doc.y + 6);
}

/** Paragraphs written one under the other from `top`, each on a new page when it would not fit above the footer. */
export function flowFrom(doc: Doc, top: number) {
  let y = top;
  return {
    y: () => y,
    gap: (points: number) => {
      y += points;
    },
    paragraph(text: string, indent: number, font: string, color: string) {
      const width = CONTENT_WIDTH - indent;
      doc.font(font).fontSize(8.5);
      if (y + doc.heightOfString(text, { width }) + 4 > BOTTOM) {
        doc.continueOnNewPage();
        y = MARGIN;
      }
      doc.fillColor(color).text(text, MARGIN + indent, y, { width });
      y = doc.y + 2;
    },
  };
}

/** What a section with nothing to list takes: its title and that in one line. */
export const EMPTY_SECTION_HEIGHT = 20;

/** A section's title on the current page when its first lines fit there, else on a new page. */
export function sectionStart(doc: Doc, title: string, subtitle: string, top: number) {
  if (top + 90 > BOTTOM) {
    doc.continueOnNewPage();
    top = MARGIN - 16;
  }
  return flowFrom(doc, sectionTitle(doc, title, subtitle, top + 16));
}

/** A section with nothing to list: its title and why, in one line (a page of its own would say less). */
export function emptySection(doc: Doc, title: string, text: string, top: number): number {
  if (top + EMPTY_SECTION_HEIGHT + 4 > BOTTOM) {
    doc.continueOnNewPage();
    top = MARGIN - 8;
  }
  doc
    .font(FONT.bold)
    .fontSize(10)
    .fillColor(COLOR.text)
    .text(`${title}: `, MARGIN, top + 8, { continued: true });
  doc.font(FONT.regular).fontSize(8.5).fillColor(COLOR.muted).text(text);
  return doc.y + 2;
}

/** "14 Mar 2026 09:30 UTC". */
export function formatTime(iso: string): string {
  return `${formatDay(iso.slice(0, 10))} ${iso.slice(11, 16)} UTC`;
}
