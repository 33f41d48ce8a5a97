// How alike the warmup mail of a month is, written by the conversation generator and, as the
// baseline in the same run, by the shipped templates as the engine wrote it before: 100 mailboxes
// in 10 workspaces, 22 working days, 1–3 new threads per mailbox a day with replies and follow-ups.
// The targets are issue 30's; SpamAssassin is scored by src/engine/spam-score.test.ts.
//
//   npm run bench -- --only diversity
//   (standalone: node --import tsx bench/diversity.bench.ts)
import { fileURLToPath } from 'node:url';
import { longSentencesOf, measureDiversity, type DiversityFigures } from '../src/conversations/diversity-measures.js';
import { machine } from '../test/scale/cluster.js';
import {
  generatedMonth,
  simulatedMailboxes,
  simulatedThreads,
  templateMonth,
} from '../test/helpers/simulated-month.js';

export interface DiversityBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  mailboxes: number;
  workspaces: number;
  days: number;
  generator: DiversityFigures & { answered: number; replies: number; writeMs: number };
  templates: DiversityFigures;
  /** Sentences of 8+ words two installations share over their first 1,000 messages each. */
  sharedAcrossInstallations: number;
}

export function runDiversityBench(options: { quick?: boolean } = {}): DiversityBenchResult {
  const size = { mailboxes: 100, workspaces: 10, days: options.quick ? 5 : 22 };
  const mailboxes = simulatedMailboxes({ mailboxes: size.mailboxes, workspaces: size.workspaces, salt: 'bench' });
  const threads = simulatedThreads(mailboxes, size.days, 'bench');
  const started = performance.now();
  const month = generatedMonth(threads, 'bench installation one');
  const writeMs = Math.round(performance.now() - started);
  const asSent = (m: { sender: { id: string }; turn: number; subject: string; ownText: string }) => ({
    sender: m.sender.id,
    openingSubject: m.turn === 1 ? m.subject : null,
    ownText: m.ownText,
  });
  // a reply answers when it is the answer to its plan's question and names the plan's answer
  const replies = month.filter((m) => m.turn === 2 || m.turn === 3);
  const answered = replies.filter(
    (m) => m.answers === m.intent && m.ownText.toLowerCase().includes(m.answer.toLowerCase()),
  ).length;
  const other = simulatedMailboxes({ mailboxes: size.mailboxes, workspaces: size.workspaces, salt: 'bench other' });
  const second = generatedMonth(simulatedThreads(other, size.days, 'bench other'), 'bench installation two');
  const seen = new Set(month.slice(0, 1_000).flatMap((m) => longSentencesOf(m.ownText, 8)));
  const shared = second
    .slice(0, 1_000)
    .flatMap((m) => longSentencesOf(m.ownText, 8))
    .filter((s) => seen.has(s)).length;
  return {
    machine: machine(),
    node: process.version,
    ...size,
    generator: { ...measureDiversity(month.map(asSent)), answered, replies: replies.length, writeMs },
    templates: measureDiversity(templateMonth(threads).map(asSent)),
    sharedAcrossInstallations: shared,
  };
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

export function diversityReport(result: DiversityBenchResult): string {
  const { cpus, model, memoryGb } = result.machine;
  const g = result.generator;
  const t = result.templates;
  return [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, Node ${result.node}; ${result.mailboxes} mailboxes in ${result.workspaces} workspaces, ${result.days} working days, ${g.messages} messages`,
    '',
    '| measure | target | conversation generator | shipped templates (baseline) |',
    '|---|---|---:|---:|',
    `| (a) messages sharing > 50 % of their 5-word shingles with one message of another sender | < 5 % | ${percent(g.shingleShared)} | ${percent(t.shingleShared)} |`,
    `| (b) distinct sentences of 6+ words sent by 2+ mailboxes | < 2 % | ${percent(g.sentencesShared)} of ${g.distinctSentences} | ${percent(t.sentencesShared)} of ${t.distinctSentences} |`,
    `| (c) distinct subjects per 100 thread openings | ≥ 90 | ${g.distinctSubjectsPer100.toFixed(1)} | ${t.distinctSubjectsPer100.toFixed(1)} |`,
    `| (d) replies and follow-ups that answer the plan's question | 100 % | ${percent(g.answered / g.replies)} of ${g.replies} | — |`,
    `| sentences of 8+ words two installations share (1,000 messages each) | 0 | ${result.sharedAcrossInstallations} | — |`,
    '',
    `Writing the month took ${g.writeMs} ms (${((g.writeMs * 1000) / g.messages).toFixed(0)} µs a message).`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(diversityReport(runDiversityBench({ quick: process.argv.includes('--quick') })));
}
