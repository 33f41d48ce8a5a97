require ["vnd.dovecot.filter", "fileinto"];
# The learning filter (MAILSTACK_LEARNING=1), run after before.sieve for every delivery: the
# receiving mailbox's own spamd profile scores the message and adds X-Spam-Flag / X-Spam-Status.
filter "spam-filter" ["score"];
if header :is "X-Spam-Flag" "YES" {
  fileinto "Junk";
  stop;
}
