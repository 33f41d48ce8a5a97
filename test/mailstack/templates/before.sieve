require ["fileinto", "vacation", "variables", "editheader"];
# Global Sieve script of the test mail stack, run before any user script.
# Deterministic "spam" for tests: any message carrying X-Test-Spam: yes goes to Junk.
if header :is "X-Test-Spam" "yes" {
  fileinto "Junk";
  stop;
}
# Deterministic "spam" by content (placement tests): a subject with this phrase goes to Junk
# (JUNK_PHRASE in test/mailstack/users.ts).
if header :contains "subject" "Act now, limited offer" {
  fileinto "Junk";
  stop;
}
# start.sh appends one rule per address of MAILSTACK_JUNK_SENDERS below, so that
# everything those senders send lands in the recipient's Junk folder.
