/*
 * How alike a body of sent mail is, measured as a filter that clusters bulk mail would see it:
 * shared 5-word shingles between messages of different senders, whole sentences sent by several
 * mailboxes, repeated subjects. Each message is its writer's own words (greeting to sign-off), not
 * the quote of the message it answers, which is the other side's text by design.
 */

export interface SentText {
  sender: string;
  /** The subject of a message that opens a thread; null for replies (they take the thread's). */
  openingSubject: string | null;
  ownText: string;
}

export interface DiversityFigures {
  messages: number;
  /** Share of messages sharing more than half of their 5-word shingles with one message of another sender. */
  shingleShared: number;
  /** Share of distinct sentences of 6+ words sent by two or more mailboxes. */
  sentencesShared: number;
  distinctSentences: number;
  /** Distinct subjects per 100 thread openings (averaged over blocks of 100). */
  distinctSubjectsPer100: number;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}’']+/u)
    .filter((w) => w.length > 0);
}

export function shinglesOf(text: string, size = 5): Set<string> {
  const list = words(text);
  const out = new Set<string>();
  for (let i = 0; i + size <= list.length; i++) out.add(list.slice(i, i + size).join(' '));
  return out;
}

/** Sentences as a reader splits them: at line ends and after . ! ? */
export function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Normalised sentences of at least `minWords` words. */
export function longSentencesOf(text: string, minWords: number): string[] {
  return sentencesOf(text)
    .map((s) => words(s))
    .filter((w) => w.length >= minWords)
    .map((w) => w.join(' '));
}

export function measureDiversity(sent: readonly SentText[]): DiversityFigures {
  const shingleSets = sent.map((m) => shinglesOf(m.ownText));
  const holders = new Map<string, number[]>();
  shingleSets.forEach((set, index) => {
    for (const shingle of set) {
      const list = holders.get(shingle);
      if (list) list.push(index);
      else holders.set(shingle, [index]);
    }
  });
  let shared = 0;
  shingleSets.forEach((set, index) => {
    if (set.size === 0) return;
    const common = new Map<number, number>();
    for (const shingle of set) {
      for (const other of holders.get(shingle) ?? []) {
        if (sent[other].sender !== sent[index].sender) common.set(other, (common.get(other) ?? 0) + 1);
      }
    }
    let most = 0;
    for (const count of common.values()) most = Math.max(most, count);
    if (most / set.size > 0.5) shared += 1;
  });

  const sendersOf = new Map<string, Set<string>>();
  for (const m of sent) {
    for (const sentence of longSentencesOf(m.ownText, 6)) {
      const senders = sendersOf.get(sentence) ?? new Set<string>();
      senders.add(m.sender);
      sendersOf.set(sentence, senders);
    }
  }
  const repeated = [...sendersOf.values()].filter((senders) => senders.size >= 2).length;

  const subjects = sent.flatMap((m) => (m.openingSubject === null ? [] : [m.openingSubject.trim().toLowerCase()]));
  const blocks: number[] = [];
  for (let start = 0; start + 100 <= subjects.length; start += 100) {
    blocks.push(new Set(subjects.slice(start, start + 100)).size);
  }
  const perBlock = blocks.length > 0 ? blocks.reduce((a, b) => a + b, 0) / blocks.length : new Set(subjects).size;

  return {
    messages: sent.length,
    shingleShared: sent.length > 0 ? shared / sent.length : 0,
    sentencesShared: sendersOf.size > 0 ? repeated / sendersOf.size : 0,
    distinctSentences: sendersOf.size,
    distinctSubjectsPer100: perBlock,
  };
}
