/*
 * Reproducible "random" bytes for a simulation. The engine's ids and Message-IDs take their tails
 * from crypto.randomBytes, and rows made in the same instant are ordered by those tails: with
 * real random bytes two runs of one seed pick mail up in a different order and drift apart. The
 * simulation test swaps randomBytes for this generator (vi.mock of node:crypto) and reseeds it per
 * pool, so a seed replays a run exactly. Never used outside the simulation.
 */
import { seededRandom, type Random } from '../../src/engine/random.js';

let source: Random = seededRandom(0);

export function reseedRandomBytes(seed: number): void {
  source = seededRandom(seed);
}

export function seededRandomBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(source() * 256);
  return bytes;
}
