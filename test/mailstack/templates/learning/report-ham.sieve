require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];
# IMAPSieve: a message copied or moved out of Junk is the mailbox owner saying "not spam";
# moving it to the Trash says nothing.
if environment :matches "imap.mailbox" "*" {
  set "mailbox" "${1}";
}
if string "${mailbox}" "Trash" {
  stop;
}
pipe :copy "spam-filter" ["ham"];
