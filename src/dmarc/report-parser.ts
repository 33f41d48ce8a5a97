// One attachment to one DMARC aggregate report, or the reason it is not one: the only door from a
// stranger's bytes to the report tables. Each step is bounded (report-archive.ts, report-xml.ts).
import { DEFAULT_ARCHIVE_LIMITS, unpackReport, type ArchiveLimits } from './report-archive.js';
import {
  DEFAULT_REPORT_LIMITS,
  readAggregateReport,
  ReportRefused,
  type AggregateReport,
  type ReportLimits,
} from './report-xml.js';

export { mayBeReport } from './report-archive.js';
export { ReportRefused, type AggregateReport, type ReportRecord } from './report-xml.js';

export type ParserLimits = ArchiveLimits & ReportLimits;

export const DEFAULT_PARSER_LIMITS: ParserLimits = { ...DEFAULT_ARCHIVE_LIMITS, ...DEFAULT_REPORT_LIMITS };

export type ParsedAttachment = { ok: true; report: AggregateReport } | { ok: false; code: string; reason: string };

/** Parses a report attachment (gzip, zip or XML); never throws for what the bytes hold. */
export function parseReportAttachment(bytes: Buffer, limits: ParserLimits = DEFAULT_PARSER_LIMITS): ParsedAttachment {
  try {
    return { ok: true, report: readAggregateReport(unpackReport(bytes, limits), limits) };
  } catch (err) {
    if (err instanceof ReportRefused) return { ok: false, code: err.code, reason: err.message };
    throw err;
  }
}
