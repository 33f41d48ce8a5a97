import type { DmarcDomainDetail } from '../api.js';
import { formatNumber } from '../format.js';
import { Badge } from './ui.js';

/**
 * At or above this share of messages passing DMARC aligned a domain is in order; below it some
 * of its mail fails SPF and DKIM alignment, which receivers with a strict policy quarantine.
 */
export const ALIGNED_GOOD = 0.98;

export const ALIGNED_LEGEND = 'Aligned: 98 % or more of the messages pass SPF or DKIM aligned; below that, a warning';

/** "99.2 %": shares are shown to a tenth, never rounded up to a clean 100 %. */
export function formatShare(share: number | null): string {
  if (share === null) return '–';
  const tenths = Math.floor(share * 1000) / 10;
  return `${Number.isInteger(tenths) ? tenths : tenths.toFixed(1)} %`;
}

/** The aligned share in its tone: green from 98 %, amber below. */
export function AlignedShare({ share }: { share: number | null }) {
  if (share === null) return <span>–</span>;
  return <Badge tone={share >= ALIGNED_GOOD ? 'green' : 'amber'}>{formatShare(share)}</Badge>;
}

type Dispositions = DmarcDomainDetail['sources'][number]['dispositions'];

/** "none 120, quarantine 3": the dispositions the receivers applied, those that happened. */
export function dispositionText(dispositions: Dispositions): string {
  const parts = (['none', 'quarantine', 'reject'] as const)
    .filter((kind) => dispositions[kind] > 0)
    .map((kind) => `${kind} ${formatNumber(dispositions[kind])}`);
  return parts.length > 0 ? parts.join(', ') : '–';
}
