/*
 * Reproducible "random" bytes for a simulation. The engine's ids and Message-IDs take their tails
 * from crypto.randomBytes, and rows made in the same instant are ordered by those tails: with
 * real random bytes two runs of one seed pick mail up in a different order and drift apart. The
 * simulation test swaps randomBytes for `seededRandomBytes` (vi.mock of node:crypto), which gives
 * seeded bytes while a pool runs and the real ones otherwise (a PostgreSQL test schema's name must
 * stay unique across processes). Never used outside the simulation.
 */
import { seededRandom, type Random } from '../../src/engine/random.js';

let source: Random | null = null;
let fallback: ((size: number) => Buffer) | null = null;

/** The real generator, used whenever no pool is running. */
export function useRealRandomBytes(real: (size: number) => Buffer): void {
  fallback = real;
}

/** Seeded bytes from now on (a pool starts); `null`: the real ones again (it ended). */
export function reseedRandomBytes(seed: number | null): void {
  source = seed === null ? null : seededRandom(seed);
}

export function seededRandomBytes(size: number): Buffer {
  if (!source) {
    if (!fallback) throw new Error('seededRandomBytes: no seed and no real generator');
    return fallback(size);
  }
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(source() * 256);
  return bytes;
}
