import { describe, expect, it } from 'vitest';
import { formatDateHeader } from './date-header.js';

describe('the Date header in the sender’s own zone', () => {
  it.each([
    ['UTC', '2026-03-12T14:20:05Z', 'Thu, 12 Mar 2026 14:20:05 +0000'],
    ['Europe/Berlin', '2026-03-12T14:20:05Z', 'Thu, 12 Mar 2026 15:20:05 +0100'],
    ['Europe/Berlin', '2026-07-01T22:30:00Z', 'Thu, 2 Jul 2026 00:30:00 +0200'],
    ['America/New_York', '2026-03-12T02:00:00Z', 'Wed, 11 Mar 2026 22:00:00 -0400'],
    ['America/New_York', '2026-01-05T12:00:00Z', 'Mon, 5 Jan 2026 07:00:00 -0500'],
    ['Asia/Kolkata', '2026-03-12T14:20:05Z', 'Thu, 12 Mar 2026 19:50:05 +0530'],
    ['America/St_Johns', '2026-01-05T12:00:00Z', 'Mon, 5 Jan 2026 08:30:00 -0330'],
    ['Pacific/Chatham', '2026-01-05T12:00:00Z', 'Tue, 6 Jan 2026 01:45:00 +1345'],
  ])('%s at %s', (zone, at, expected) => {
    expect(formatDateHeader(new Date(at), zone)).toBe(expected);
  });

  it('falls back to UTC for a zone it does not know', () => {
    expect(formatDateHeader(new Date('2026-03-12T14:20:05Z'), 'Mars/Olympus')).toBe('Thu, 12 Mar 2026 14:20:05 +0000');
  });
});
