// An alert in the format each chat's incoming webhook accepts. Slack: a JSON body with `text` (the
// notification's fallback) and `blocks` (Block Kit: a header and mrkdwn sections). Teams: a
// `message` whose one attachment is an Adaptive Card, the format Teams incoming webhooks and
// Workflows take. Event text is a stranger's in places (a reply's excerpt), so it is escaped for
// Slack (no `<!channel>`, no disguised link) and given to Teams as text runs, which read no Markdown.
import type { AlertMessage } from './alert-messages.js';

export type ChatKind = 'slack' | 'teams';

/** Slack's mrkdwn control characters, escaped as Slack documents. */
function slackEscape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A header block's text is at most 150 characters. */
function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

export function slackMessage(message: AlertMessage): Record<string, unknown> {
  const happened = message.happened.map(slackEscape).join('\n');
  const fix = message.fix === null ? null : slackEscape(message.fix);
  return {
    text: slackEscape(`${message.title}${message.fix ? ` — Fix: ${message.fix}` : ''}`),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: clip(message.title, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: clip(`*What happened*\n${happened}`, 3000) } },
      ...(fix === null ? [] : [{ type: 'section', text: { type: 'mrkdwn', text: clip(`*Fix*\n${fix}`, 3000) } }]),
    ],
  };
}

export function teamsMessage(message: AlertMessage): Record<string, unknown> {
  // A RichTextBlock's TextRun shows its text as written: Adaptive Cards read Markdown (links, bold,
  // lists) only in a TextBlock, so a stranger's "[Your invoice](https://…)" stays words, not a link.
  const block = (value: string, style: { size?: string; weight?: string } = {}, spacing?: string) => ({
    type: 'RichTextBlock',
    ...(spacing === undefined ? {} : { spacing }),
    inlines: [{ type: 'TextRun', text: value, ...style }],
  });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            block(message.title, { size: 'Medium', weight: 'Bolder' }),
            block('What happened', { weight: 'Bolder' }, 'Medium'),
            ...message.happened.map((line) => block(line)),
            ...(message.fix === null ? [] : [block('Fix', { weight: 'Bolder' }, 'Medium'), block(message.fix)]),
          ],
        },
      },
    ],
  };
}

export function chatBody(kind: ChatKind, message: AlertMessage): string {
  return JSON.stringify(kind === 'slack' ? slackMessage(message) : teamsMessage(message));
}
