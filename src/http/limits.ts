import { AppError } from './errors.js';

/** The request body limit of API.md: 1 MiB (template imports have their own, WARMUP_MAX_IMPORT_BYTES). */
export const BODY_LIMIT = 1024 * 1024;

/**
 * A workspace quota or size limit was reached. Each limit has its own `code` (mailbox_limit_reached,
 * template_limit_reached, key_limit_reached, preview_too_large), so a client can tell them apart without
 * parsing `detail`; a body over a size limit keeps the contract's `payload_too_large` (API.md).
 */
export class LimitExceededError extends AppError {
  constructor(status: 409 | 413 | 422, code: string, message: string) {
    super(status, code, message);
  }
}

/** `n` with its unit, as a limit is named in an error: `1,000 templates`, `256 KiB`. */
export function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes} bytes`;
}
