# The learning spam filter of the test stack (MAILSTACK_LEARNING=1), sourced by start.sh.
# SpamAssassin's spamd, on its own port on 127.0.0.1, keeps one profile per receiving mailbox
# (--virtual-config-dir: Bayes database and TxRep reputation under $DIR/learning/users);
# Dovecot's Sieve runs spamc for every delivery and files spam into Junk; IMAPSieve runs
# "spamc -L spam" when the owner moves a message into Junk and "spamc -L ham" when out of it.
# Uses from start.sh: DIR, BASE, T, HOME_DIR, USERS, VMAIL_UID, VMAIL_GID, render, die.

. "$HOME_DIR/learning-seed.sh"

SPAMD_USER="${MAILSTACK_SPAMD_USER:-debian-spamd}"
SPAMD_PORT=$((BASE + 783))

learning_check() {
  command -v spamd >/dev/null || die "MAILSTACK_LEARNING needs spamd (apt-get install spamd spamc)"
  command -v spamc >/dev/null || die "MAILSTACK_LEARNING needs spamc (apt-get install spamd spamc)"
  id -u "$SPAMD_USER" >/dev/null 2>&1 || die "MAILSTACK_LEARNING: no user '$SPAMD_USER' to run spamd as (the spamd package creates debian-spamd)"
  [ -d /etc/spamassassin ] || die "MAILSTACK_LEARNING: no /etc/spamassassin (apt-get install spamassassin)"
}

learning_prepare() {
  local L="$DIR/learning" spamc
  spamc="$(command -v spamc)"
  mkdir -p "$L"/{etc,users,bin,sieve,seed}
  # Debian's plugin list (*.pre) and nothing else of the host's configuration
  cp /etc/spamassassin/*.pre "$L/etc/"
  cp "$T/learning/local.cf" "$T/learning/learning.pre" "$L/etc/"
  cp "$T/learning/deliver.sieve" "$T/learning/report-spam.sieve" "$T/learning/report-ham.sieve" "$L/sieve/"
  # One program for Dovecot's filter (delivery) and pipe (IMAPSieve) calls, run as the mail
  # owner; Dovecot sets USER to the mailbox (the recipient, or the IMAP user who moved mail).
  cat > "$L/bin/spam-filter" <<SCRIPT
#!/bin/sh
# spam-filter score|spam|ham  (message on stdin; "score" writes it back with the verdict)
set -u
case "\$1" in (score) learn="";; (spam|ham) learn="-L \$1";; (*) echo "spam-filter: \$1?" >&2; exit 64;; esac
if [ -z "\$learn" ]; then exec "$spamc" -d 127.0.0.1 -p $SPAMD_PORT -t 30 -u "\$USER"; fi
"$spamc" -d 127.0.0.1 -p $SPAMD_PORT -t 30 -u "\$USER" \$learn >/dev/null
SCRIPT
  chmod 755 "$L/bin/spam-filter"
  chown "$SPAMD_USER" "$L/users"; chmod 700 "$L/users"
  render "$T/learning/dovecot.conf.in" "$L/dovecot.conf"
  cat "$L/dovecot.conf" >> "$DIR/etc/dovecot.conf"
}

# IMAPSieve and the delivery script run as the mail owner, who cannot write the compiled
# scripts next to them: compile them here, as start.sh does before.sieve.
learning_compile() {
  local s
  for s in deliver report-spam report-ham; do
    sievec -c "$DIR/etc/dovecot.conf" "$DIR/learning/sieve/$s.sieve" || die "sievec failed on $s.sieve"
  done
}

# spamd compiles SpamAssassin's rules for seconds: started first, awaited last. Meanwhile
# sa-learn learns the seed corpus (learning-seed.sh) into one Bayes database, which
# learning_seed copies to every mailbox: one perl start per class instead of one per mailbox.
learning_start() {
  ( seed_corpus "$DIR/learning/seed" \
    && sa-learn -L --siteconfigpath="$DIR/learning/etc" --dbpath "$DIR/learning/seed/db/bayes" --spam "$DIR/learning/seed/spam" \
    && sa-learn -L --siteconfigpath="$DIR/learning/etc" --dbpath "$DIR/learning/seed/db/bayes" --ham "$DIR/learning/seed/ham" \
  ) >"$DIR/log/seed.log" 2>&1 </dev/null &
  SEED_PID=$!
  port_busy "$SPAMD_PORT" && die "port $SPAMD_PORT on 127.0.0.1 (spamd) is already in use"
  spamd -L -x --siteconfigpath="$DIR/learning/etc" --virtual-config-dir="$DIR/learning/users/%d/%l" \
    -u "$SPAMD_USER" --allow-tell -i 127.0.0.1 -p "$SPAMD_PORT" \
    -m 2 --min-children=1 --min-spare=1 --max-spare=2 \
    -r "$DIR/run/spamd.pid" -s "$DIR/log/spamd.log" -d </dev/null >/dev/null 2>>"$DIR/log/spamd.stderr" \
    || { cat "$DIR/log/spamd.stderr" >&2; die "spamd failed to start; see $DIR/log/spamd.log"; }
}

# Every mailbox starts with the seed's Bayes database; Bayes speaks from its first delivery
# (bayes_min_*_num in local.cf).
learning_seed() {
  wait "$SEED_PID" || { cat "$DIR/log/seed.log" >&2; die "sa-learn failed on the seed corpus; see $DIR/log/seed.log"; }
  local up u d
  for up in $USERS; do
    u="${up%%:*}"; u="${u,,}"
    d="$DIR/learning/users/${u#*@}/${u%%@*}"
    mkdir -p "$d" && cp "$DIR/learning/seed/db/bayes_toks" "$DIR/learning/seed/db/bayes_seen" "$d/"
  done
  chown -R "$SPAMD_USER" "$DIR/learning/users"
}

learning_ready() {
  timeout 3 spamc -d 127.0.0.1 -p "$SPAMD_PORT" -K --connect-retries=1 >/dev/null 2>&1
}
