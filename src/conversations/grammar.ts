/*
 * The expander the phrase banks are written for. A bank is a set of named rules, each a list of
 * alternatives; inside an alternative `<rule>` expands another rule, `{a|b|c}` picks one of its
 * parts (parts may nest) and `[slot]` is filled from the conversation's plan (a name, the topic,
 * the day the answer chose). Which alternatives a writer uses, and how often, depends on its
 * region: each installation and workspace keeps its own subset of every rule with its own weights,
 * so two installations draw whole sentences from different parts of the same space.
 */
import { createHash } from 'node:crypto';

export type Rules = Readonly<Record<string, readonly string[]>>;

/** A source of numbers in [0, 1), deterministic from its seed text. */
export type Draw = () => number;

/** A generator of [0, 1) numbers from any text: the same text always yields the same sequence. */
export function drawFrom(seedText: string): Draw {
  let state = createHash('sha256').update(seedText).digest().readUInt32BE(0);
  // mulberry32: small, fast and well spread; crypto strength is not needed for wording
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Below this weight an alternative is outside the region (at least two always stay in). */
const REGION_CUT = 0.45;
/**
 * Long lists (project names) keep only their top fifth in a region: a person works on a few
 * projects, and two regions then share few of them.
 */
const LONG_LIST = 40;
const LONG_LIST_SHARE = 0.2;

/** The alternatives a region keeps of one choice, with their weights, cumulated for drawing. */
interface RegionChoice {
  indexes: number[];
  cumulative: number[];
}

// Kept per region and choice: hashing every alternative at every pick would dominate the cost of
// writing. Regions are few (installations × workspaces), so the cache restarts past a bound.
const regionChoices = new Map<string, RegionChoice>();
const REGION_CHOICES_MAX = 200_000;

function regionChoice(region: string, choiceKey: string, count: number): RegionChoice {
  const key = `${region}\n${choiceKey}\n${count}`;
  const known = regionChoices.get(key);
  if (known) return known;
  const digest = createHash('sha256').update(key).digest();
  const weights = Array.from({ length: count }, (_, i) => {
    const bytes = digest.readUInt16BE((i * 2) % 30) ^ (Math.imul(i + 1, 0x9e37) & 0xffff);
    const mixed = Math.imul(bytes ^ (bytes >>> 7), 0x2c1b3c6d) >>> 0;
    return (mixed % 10_000) / 10_000;
  });
  const ranked = weights.map((w, i) => ({ w, i })).sort((a, b) => b.w - a.w);
  const kept = (
    count >= LONG_LIST
      ? ranked.slice(0, Math.ceil(count * LONG_LIST_SHARE))
      : ranked.filter((entry, rank) => entry.w >= REGION_CUT || rank < 2)
  ).sort((a, b) => a.i - b.i);
  let sum = 0;
  const choice = {
    indexes: kept.map((entry) => entry.i),
    cumulative: kept.map((entry) => (sum += 0.2 + entry.w)),
  };
  if (regionChoices.size >= REGION_CHOICES_MAX) regionChoices.clear();
  regionChoices.set(key, choice);
  return choice;
}

function choose(region: string, choiceKey: string, count: number, draw: Draw): number {
  if (count === 1) return 0;
  const { indexes, cumulative } = regionChoice(region, choiceKey, count);
  const target = draw() * cumulative[cumulative.length - 1];
  const at = cumulative.findIndex((edge) => target < edge);
  return indexes[at === -1 ? indexes.length - 1 : at];
}

export interface Expansion {
  rules: Rules;
  region: string;
  draw: Draw;
  slots: Readonly<Record<string, string>>;
}

/** Expands one rule of the bank. */
export function expandRule(name: string, ctx: Expansion, depth = 0): string {
  const alternatives = ctx.rules[name];
  if (!alternatives || alternatives.length === 0) throw new Error(`the phrase bank has no rule "${name}"`);
  if (depth > 12) throw new Error(`rule "${name}" nests too deep`);
  const index = choose(ctx.region, `rule:${name}`, alternatives.length, ctx.draw);
  return expandText(alternatives[index], ctx, depth + 1);
}

/** Splits `a|b{c|d}` on its top-level bars only. */
function topLevelParts(inner: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === '|' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts;
}

/** Expands an alternative's text: nested choices, rule references and plan slots. */
export function expandText(text: string, ctx: Expansion, depth = 0): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      let level = 1;
      let end = i + 1;
      for (; end < text.length && level > 0; end++) {
        if (text[end] === '{') level++;
        else if (text[end] === '}') level--;
      }
      const inner = text.slice(i + 1, end - 1);
      const parts = topLevelParts(inner);
      out += expandText(parts[choose(ctx.region, `choice:${inner}`, parts.length, ctx.draw)], ctx, depth + 1);
      i = end - 1;
    } else if (c === '<') {
      const end = text.indexOf('>', i);
      out += expandRule(text.slice(i + 1, end), ctx, depth + 1);
      i = end;
    } else if (c === '[') {
      const end = text.indexOf(']', i);
      const slot = text.slice(i + 1, end);
      const value = ctx.slots[slot];
      if (value === undefined) throw new Error(`the plan has no slot "${slot}"`);
      out += value;
      i = end;
    } else {
      out += c;
    }
  }
  return out;
}

/** A sentence as written: single spaces, its first letter capital (after an opening ¿ or ¡). */
export function tidySentence(text: string): string {
  const spaced = text
    .replace(/[ \t]+/g, ' ')
    .replace(/ ([,.;:!?])(?=\s|$)/g, (_m, mark: string) => mark)
    .trim();
  return spaced.replace(/^([¿¡«\s]*)(\p{L})/u, (_m, lead: string, letter: string) => lead + letter.toUpperCase());
}
