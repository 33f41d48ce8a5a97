// What each event is called where a person chooses events: the Webhooks and the Alerts pages.
export const EVENT_LABELS: Record<string, string> = {
  'mailbox.error': 'A mailbox stopped with an error',
  'mailbox.recovered': 'A mailbox recovered',
  'mailbox.human_reply': 'A person replied to warmup mail by hand',
  'mailbox.receiver_filtering': "A mailbox's filter files the pool's mail into spam",
  'reputation.dropped': 'A reputation dropped 10 points or more',
  'check.failed': 'A DNS check failed',
  'placement_test.completed': 'A placement test finished',
  'daily.summary': "Yesterday's summary, once a day",
  'domain.provider_signal': "A provider's own feed holds a domain, or stops holding it",
};
