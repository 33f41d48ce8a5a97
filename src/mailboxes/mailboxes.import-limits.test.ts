// Issue 28, part 6: concurrent CSV imports had no cap (4 imports of 40 rows held 64 outbound
// connections for 50 s). One import runs per workspace at a time, and the rows of all imports
// together log in at most MAX_IMPORT_ROWS_AT_ONCE at a time (two connections each, IMAP and SMTP).
import { describe, expect, it } from 'vitest';
import { AppError } from '../http/errors.js';
import { ConnectionChecksBusyError } from './connection-guard.js';
import { importMailboxes, MAX_IMPORT_ROWS_AT_ONCE, parseMailboxCsv, type ImportRow } from './mailboxes.import.js';
import type { Mailbox } from './mailboxes.schemas.js';

function rowsOf(count: number, workspace: string): ImportRow[] {
  const lines = Array.from({ length: count }, (_, i) => `${workspace}-${i}@example.com,app-password,gmail`);
  return parseMailboxCsv(['email,password,provider', ...lines].join('\n'));
}

/** A service whose login check takes `ms` and counts how many run at once. */
function slowService(ms: number) {
  const seen = { running: 0, most: 0 };
  const service = {
    remainingMailboxes: async () => ({ remaining: 1_000, limit: 1_000 }),
    create: async () => {
      seen.running += 1;
      seen.most = Math.max(seen.most, seen.running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      seen.running -= 1;
      return { id: `mbx_${Math.random()}` } as unknown as Mailbox;
    },
  };
  return { service, seen };
}

describe('concurrent mailbox imports', () => {
  it('answers a second import of the same workspace with 409 while the first runs, and takes it after', async () => {
    const { service } = slowService(30);
    const first = importMailboxes(service, 'ws_a', rowsOf(10, 'a'));
    const second = importMailboxes(service, 'ws_a', rowsOf(2, 'b'));
    await expect(second).rejects.toMatchObject({ status: 409, code: 'import_in_progress' });
    await expect(second).rejects.toBeInstanceOf(AppError);
    expect((await first).created).toBe(10);
    expect((await importMailboxes(service, 'ws_a', rowsOf(2, 'c'))).created).toBe(2);
  });

  it('lets other workspaces import at the same time, but never more than the global number of rows at once', async () => {
    const { service, seen } = slowService(20);
    const results = await Promise.all(
      ['w1', 'w2', 'w3', 'w4'].map((ws) => importMailboxes(service, ws, rowsOf(40, ws))),
    );
    expect(results.map((r) => r.created)).toEqual([40, 40, 40, 40]);
    expect(seen.most).toBeLessThanOrEqual(MAX_IMPORT_ROWS_AT_ONCE);
    expect(MAX_IMPORT_ROWS_AT_ONCE * 2).toBeLessThan(64);
  });

  it('frees the workspace when an import fails', async () => {
    const service = {
      remainingMailboxes: async () => {
        throw new Error('database gone');
      },
      create: async () => ({}) as Mailbox,
    };
    await expect(importMailboxes(service, 'ws_f', rowsOf(1, 'f'))).rejects.toThrow('database gone');
    const { service: working } = slowService(1);
    expect((await importMailboxes(working, 'ws_f', rowsOf(1, 'g'))).created).toBe(1);
  });

  it('a row that finds every connection check of the process taken waits its turn instead of failing', async () => {
    let busy = 3;
    const service = {
      remainingMailboxes: async () => ({ remaining: 1_000, limit: 1_000 }),
      create: async () => {
        if (busy-- > 0) throw new ConnectionChecksBusyError(2);
        return { id: 'mbx_late' } as unknown as Mailbox;
      },
    };
    const result = await importMailboxes(service, 'ws_busy', rowsOf(1, 'busy'));
    expect(result).toMatchObject({ created: 1, failed: 0 });
  });
});
