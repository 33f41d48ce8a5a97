import type { ColumnType } from 'kysely';

// The DMARC aggregate report tables (migration 040), apart from schema.ts to keep each file short.

/** Where a workspace's `rua` reports arrive: one folder of one of its mailboxes. */
export interface DmarcSourcesTable {
  workspace_id: string;
  mailbox_id: string;
  folder: string;
  uid_validity: string | null;
  /** The highest UID of the folder looked at (a message below it is never read again). */
  last_uid: ColumnType<number, number | undefined, number>;
  checked_at: string | null;
  /** Why the last read failed (the IMAP error), or null. */
  last_error: string | null;
  updated_at: string;
}

export interface DmarcReportsTable {
  id: string;
  workspace_id: string;
  org_name: string;
  report_id: string;
  /** The domain whose policy the report is about (policy_published/domain). */
  domain: string;
  begin_at: string;
  end_at: string;
  /** `YYYY-MM-DD`: the UTC day the report's range begins, the day its rows count on. */
  day: string;
  policy_p: string | null;
  policy_sp: string | null;
  policy_pct: number | null;
  policy_adkim: string | null;
  policy_aspf: string | null;
  records: number;
  messages: number;
  received_at: string;
}

export interface DmarcRecordsTable {
  report_id: string;
  row_no: number;
  source_ip: string;
  source_name: string | null;
  messages: number;
  disposition: string;
  /** policy_evaluated: `pass` when DKIM, resp. SPF, passed aligned with the From domain. */
  dkim_aligned: string;
  spf_aligned: string;
  dkim_result: string | null;
  spf_result: string | null;
  header_from: string;
}

/** A report message that could not be read, filed away with the reason. */
export interface DmarcSetAsideTable {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  subject: string;
  code: string;
  reason: string;
  found_at: string;
}
