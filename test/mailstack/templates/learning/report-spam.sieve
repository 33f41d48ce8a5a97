require ["vnd.dovecot.pipe", "copy", "imapsieve"];
# IMAPSieve: a message copied or moved into Junk is the mailbox owner saying "spam".
pipe :copy "spam-filter" ["spam"];
