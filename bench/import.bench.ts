// Bulk import of 200 mailboxes from one CSV file through POST /api/mailboxes/import, against a
// mail stack of its own (Postfix + Dovecot on loopback): 180 rows with the right password, 12 with
// a wrong one, 8 addresses repeated in the file; then the same file again, which must create
// nothing. Every row's logins (IMAP and SMTP) really run, 8 rows at a time.
//
//   npm run bench -- --only import [-- --quick]
//   (standalone: node --import tsx bench/import.bench.ts)
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../test/helpers/test-app.js';
import { mailStackAvailable } from '../test/mailstack/mail-stack.js';
import { startPrivateMailStack } from '../test/mailstack/private-stack.js';
import { stackMailPolicy } from '../test/mailstack/use-mail-stack.js';
import type { MailUser } from '../test/mailstack/users.js';
import { machine } from '../test/scale/cluster.js';

export interface ImportBenchResult {
  rows: number;
  users: number;
  first: { ms: number; created: number; existing: number; failed: number };
  second: { ms: number; created: number; existing: number; failed: number };
  machine: ReturnType<typeof machine>;
}

export async function runImportBench(
  options: { quick?: boolean; log?: (line: string) => void } = {},
): Promise<ImportBenchResult> {
  const log = options.log ?? (() => undefined);
  const availability = mailStackAvailable();
  if (!availability.ok) {
    throw new Error(
      `the import bench needs Postfix and Dovecot: ${availability.problem ?? `missing ${availability.missing.join(', ')}`}`,
    );
  }
  const good = options.quick ? 45 : 180;
  const wrong = options.quick ? 3 : 12;
  const repeated = options.quick ? 2 : 8;
  const users: MailUser[] = Array.from({ length: good + wrong }, (_, i) => {
    const local = `imp${String(i).padStart(3, '0')}`;
    return { email: `${local}@import-${i % 10}.test`, password: `${local}-pass-123` };
  });
  log(`starting a mail stack with ${users.length} users`);
  const stack = await startPrivateMailStack('import-bench', users);
  const t = await createTestApp({ mailPolicy: stackMailPolicy(stack), limits: { maxMailboxes: 1_000 } });
  try {
    const server = `custom,${stack.host},${stack.imapPort},false,${stack.host},${stack.submissionPort},false`;
    const lines = users.map((user, i) => `${user.email},${i < good ? user.password : 'wrong-password'},${server}`);
    for (let i = 0; i < repeated; i += 1) lines.push(lines[i * 7]!);
    const csv = [
      'email,password,provider,imap_host,imap_port,imap_secure,smtp_host,smtp_port,smtp_secure',
      ...lines,
    ].join('\n');
    const run = async () => {
      const started = performance.now();
      const res = await t.workspace.request({
        method: 'POST',
        url: '/api/mailboxes/import',
        headers: { 'content-type': 'text/csv' },
        payload: csv,
      });
      const ms = performance.now() - started;
      if (res.statusCode !== 200) throw new Error(`import answered ${res.statusCode}: ${res.body}`);
      const result = res.json().import as { created: number; existing: number; failed: number };
      return { ms, created: result.created, existing: result.existing, failed: result.failed };
    };
    log(`importing ${lines.length} rows`);
    const first = await run();
    log(`first import: ${JSON.stringify(first)}`);
    const second = await run();
    log(`second import: ${JSON.stringify(second)}`);
    if (first.created !== good || first.failed !== wrong || first.existing !== repeated) {
      throw new Error(`wrong per-row results: ${JSON.stringify(first)}`);
    }
    if (second.created !== 0 || second.existing !== good + repeated || second.failed !== wrong) {
      throw new Error(`the second import created something: ${JSON.stringify(second)}`);
    }
    return { rows: lines.length, users: users.length, first, second, machine: machine() };
  } finally {
    await t.close();
    await stack.stop();
  }
}

export function importReport(result: ImportBenchResult): string {
  const row = (label: string, r: ImportBenchResult['first']) =>
    `| ${label} | ${result.rows} | ${r.created} | ${r.existing} | ${r.failed} | ${(r.ms / 1000).toFixed(1)} s | ${(result.rows / (r.ms / 1000)).toFixed(1)} |`;
  return [
    `Machine: ${result.machine.cpus} CPUs (${result.machine.model}), ${result.machine.memoryGb} GB`,
    '',
    '| run | rows | created | exists | failed | time | rows/s |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('first import', result.first),
    row('same file again', result.second),
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runImportBench({ quick: process.argv.includes('--quick'), log: (line) => console.log(line) });
  console.log(importReport(result));
}
