// Email alerts over the operator's SMTP server (alerts.config.ts): one message to each owner and
// admin of the workspace, written from the same reading of the event as the chat alerts. The
// server is the operator's, so its host is allowed as configured; its certificate is checked
// against the operator's CAs unless it is configured without TLS. A recipient whose server took
// the mail is noted, so a retry after a later recipient's failure does not mail them again; each
// message's Message-ID is made from the delivery and the recipient, so the copy a crash between
// sending and noting makes is recognisably the same message.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { MailPolicy } from '../mail/policy.js';
import { createSmtpSender, verifySmtp, type MailServerConfig } from '../mail/smtp.js';
import { describeEvent, type AlertEvent, type AlertMessage } from './alert-messages.js';
import type { AlertMailSettings } from './alerts.config.js';
import { alertMailSentTo, alertRecipients, markAlertMailSent, workspaceName } from './alerts.repository.js';

export interface AlertMailer {
  settings: AlertMailSettings;
  /** The operator's mail policy: its CAs and EHLO name. */
  policy: MailPolicy;
}

export function alertSmtpConfig({ settings, policy }: AlertMailer): MailServerConfig {
  return {
    host: settings.host,
    port: settings.port,
    secure: settings.tls === 'implicit',
    username: settings.username,
    password: settings.password,
    policy: {
      ...policy,
      allowedHosts: [settings.host],
      plaintextHosts: settings.tls === 'none' ? [settings.host] : [],
    },
  };
}

/** Connects, logs in and quits, sending nothing (`warmup doctor`). Throws MailConnectionError. */
export async function checkAlertSmtp(mailer: AlertMailer, timeoutMs = 10_000): Promise<void> {
  await verifySmtp(alertSmtpConfig(mailer), { timeoutMs });
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The subject, text and HTML of an alert mail. */
export function alertMail(message: AlertMessage, workspace: string): { subject: string; text: string; html: string } {
  const why = `You get this email because you are an owner or admin of the Warmup workspace “${workspace}”. An owner or admin chooses which alerts are emailed on the Alerts page of the dashboard.`;
  const text = [
    message.title,
    '',
    'What happened',
    ...message.happened,
    ...(message.fix === null ? [] : ['', 'Fix', message.fix]),
    '',
    '-- ',
    why,
    '',
  ].join('\n');
  const paragraphs = (lines: string[]) => lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const html = [
    `<h1 style="font-size:18px">${escapeHtml(message.title)}</h1>`,
    '<h2 style="font-size:15px">What happened</h2>',
    paragraphs(message.happened),
    ...(message.fix === null ? [] : ['<h2 style="font-size:15px">Fix</h2>', paragraphs([message.fix])]),
    `<hr><p style="color:#555;font-size:12px">${escapeHtml(why)}</p>`,
  ].join('\n');
  return { subject: `[Warmup] ${message.title}`, text, html };
}

/** The same for a recipient on every attempt, whoever else joins or leaves the workspace meanwhile. */
function recipientTag(address: string): string {
  return createHash('sha256').update(address.toLowerCase()).digest('hex').slice(0, 12);
}

function fromAddress(from: string): { name?: string; address: string } {
  const match = /^\s*"?([^"<]*?)"?\s*<([^<>]+)>\s*$/.exec(from);
  return match ? { ...(match[1] ? { name: match[1] } : {}), address: match[2]! } : { address: from.trim() };
}

/**
 * Mails one event to the workspace's owners and admins. Returns null once every recipient's
 * server accepted it, else why not in words fit for the workspace (the server's own answer goes to
 * the service log only: it is the operator's, not the tenant's).
 */
export async function mailAlert(
  deps: { db: Kysely<Database>; logger: Logger; mailer: AlertMailer | undefined; signal?: AbortSignal },
  delivery: { id: string; workspaceId: string; payload: string; at: Date },
): Promise<string | null> {
  if (!deps.mailer) return 'no SMTP server is configured for email alerts (ask the operator)';
  const recipients = await alertRecipients(deps.db, delivery.workspaceId);
  if (recipients.length === 0) return 'the workspace has no owner or admin with an email address';
  const event = JSON.parse(delivery.payload) as AlertEvent;
  const mail = alertMail(
    describeEvent(event),
    (await workspaceName(deps.db, delivery.workspaceId)) ?? 'your workspace',
  );
  const from = fromAddress(deps.mailer.settings.from);
  const domain = from.address.split('@')[1] ?? 'localhost';
  const sender = createSmtpSender(alertSmtpConfig(deps.mailer), deps.signal ? { signal: deps.signal } : {});
  try {
    // a retry mails only those whose server has not taken it yet: the others have their copy
    const sent = await alertMailSentTo(deps.db, delivery.id);
    for (const address of recipients) {
      if (sent.has(address)) continue;
      await sender.send({
        from,
        to: { address },
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${delivery.id}.${recipientTag(address)}@${domain}>`,
        date: delivery.at,
      });
      await markAlertMailSent(deps.db, delivery.id, address, new Date());
    }
    return null;
  } catch (error) {
    deps.logger.warn({ err: error, delivery: delivery.id }, 'email alert not sent');
    return 'the alert mail server did not take the message (the service log says why)';
  } finally {
    sender.close();
  }
}
