#!/usr/bin/env bash
# Start one throw-away mail stack for Warmup's tests: Postfix (submission with AUTH)
# -> Dovecot LMTP + Sieve -> Maildir, read over Dovecot IMAP. Everything listens on
# 127.0.0.1 and every file of the instance lives in one directory under /tmp, so
# several instances (parallel test runs) can run side by side.
#
#   start.sh [NAME]            NAME defaults to "default" ([A-Za-z0-9_-]+)
#
# Environment (all optional):
#   MAILSTACK_DIR          instance directory (default /tmp/warmup-mailstack/NAME). Every
#                          parent must be world-searchable (o+x): the postfix, dovecot and
#                          vmail users must reach it, so never inside a 0700 home/checkout
#   MAILSTACK_BASE_PORT    ports = BASE+143 imap, BASE+993 imaps, BASE+587 submission,
#                          BASE+465 submissions, BASE+25 plain smtp ("MX")  (default 10000)
#   MAILSTACK_USERS        "user@domain:password ..." (default: three demo users below).
#                          Passwords must not contain ':', '"', '\' or white space.
#   MAILSTACK_USERS_FILE   a file of more users, one "user@domain:password" a line (added to
#                          MAILSTACK_USERS, no default users then): thousands of users do not
#                          fit in one environment variable (Linux caps one at 128 KiB)
#   MAILSTACK_JUNK_SENDERS "a@x.test b@y.test": all mail from these senders is filed into
#                          the recipient's Junk folder (Sieve), which is how the tests make
#                          a mailbox "land in spam"
#   MAILSTACK_JUNK_RECIPIENTS "a@x.test": these users' server files all mail they receive
#                          into Junk (a hostile receiver that junks everything)
#   MAILSTACK_DISCARD_RECIPIENTS "a@x.test": these users' server silently drops all mail
#                          they receive from anyone but themselves (a hostile receiver
#                          that deletes everything, yet passes a round trip)
#   MAILSTACK_VACATION_RECIPIENTS "a@x.test": these users answer every sender automatically
#                          (Sieve vacation, once a day per sender), like an owner out of office
#   MAILSTACK_IMAP_CAPABILITY "IMAP4rev1 ...": the capabilities IMAP announces after login
#                          (Dovecot's imap_capability), e.g. without MOVE and UIDPLUS to play
#                          an older server; default: Dovecot's own
#   MAILSTACK_REWRITE_MESSAGE_ID_DOMAINS "o.test": like Outlook.com, the stack gives mail whose
#                          Message-ID is on one of these domains a new Message-ID on delivery
#                          and keeps the original in X-Microsoft-Original-Message-ID
#   MAILSTACK_REPLACE_MESSAGE_ID_DOMAINS "p.test": the same, without keeping the original
#                          anywhere (only the thread headers still name the thread)
#   MAILSTACK_AUTH_RESULTS=1  every delivery gets the receiving domain's own
#                          Authentication-Results (authserv-id = the recipient's domain) and an
#                          X-Spam-Status, added on top like a receiving server does (Sieve editheader)
#   MAILSTACK_DKIM_FAIL_SENDERS "a@x.test": with MAILSTACK_AUTH_RESULTS, these senders' mail is
#                          recorded with dkim=fail and dmarc=fail
#   MAILSTACK_LEARNING=1   a learning spam filter (learning-filter.sh): SpamAssassin's spamd on
#                          BASE+783 scores every delivery with the receiving mailbox's own Bayes
#                          and TxRep and files spam into Junk; moving mail into / out of Junk over
#                          IMAP teaches it spam / ham (IMAPSieve). Needs spamd and spamc; costs
#                          seconds at start (spamd compiles the rules)
#   MAILSTACK_VMAIL_UID / MAILSTACK_VMAIL_GID  owner of all mail files (default 5000;
#                          needs no /etc/passwd entry; must not be 0)
#   MAILSTACK_READY_TIMEOUT seconds to wait for readiness (default 20)
#
# Must run as root (the Postfix and Dovecot masters need it). Prints KEY=VALUE lines
# (also written to $DIR/stack.env) and writes $DIR/stack.json for programs.
# Any message with the header "X-Test-Spam: yes" is filed into Junk as well.
set -euo pipefail
umask 022

NAME="${1:-default}"
case "$NAME" in (*[!A-Za-z0-9_-]*|'') echo "start.sh: bad instance name '$NAME'" >&2; exit 2;; esac
HOME_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${MAILSTACK_DIR:-/tmp/warmup-mailstack/$NAME}"
BASE="${MAILSTACK_BASE_PORT:-10000}"
USERS_FILE="${MAILSTACK_USERS_FILE:-}"
if [ -n "$USERS_FILE" ]; then
  [ -r "$USERS_FILE" ] || { echo "start.sh: MAILSTACK_USERS_FILE '$USERS_FILE' is not readable" >&2; exit 2; }
  USERS="${MAILSTACK_USERS:-} $(tr '\n' ' ' < "$USERS_FILE")"
else
  USERS="${MAILSTACK_USERS:-alice@alpha.test:alice-pass-123 bob@beta.test:bob-pass-123 carol@gamma.test:carol-pass-123}"
fi
JUNK_SENDERS="${MAILSTACK_JUNK_SENDERS:-}"
JUNK_RECIPIENTS="${MAILSTACK_JUNK_RECIPIENTS:-}"
DISCARD_RECIPIENTS="${MAILSTACK_DISCARD_RECIPIENTS:-}"
VACATION_RECIPIENTS="${MAILSTACK_VACATION_RECIPIENTS:-}"
IMAP_CAPABILITY="${MAILSTACK_IMAP_CAPABILITY:-}"
REWRITE_DOMAINS="${MAILSTACK_REWRITE_MESSAGE_ID_DOMAINS:-}"
REPLACE_DOMAINS="${MAILSTACK_REPLACE_MESSAGE_ID_DOMAINS:-}"
AUTH_RESULTS="${MAILSTACK_AUTH_RESULTS:-}"
DKIM_FAIL_SENDERS="${MAILSTACK_DKIM_FAIL_SENDERS:-}"
LEARNING="${MAILSTACK_LEARNING:-}"
VMAIL_UID="${MAILSTACK_VMAIL_UID:-5000}"
VMAIL_GID="${MAILSTACK_VMAIL_GID:-5000}"
READY_TIMEOUT="${MAILSTACK_READY_TIMEOUT:-20}"

case "$BASE" in (*[!0-9]*|'') echo "start.sh: MAILSTACK_BASE_PORT must be a number" >&2; exit 2;; esac
[ "$BASE" -ge 1024 ] && [ "$BASE" -le 64000 ] || { echo "start.sh: MAILSTACK_BASE_PORT must be in 1024..64000" >&2; exit 2; }
IMAP_PORT=$((BASE + 143)); IMAPS_PORT=$((BASE + 993))
SUBMISSION_PORT=$((BASE + 587)); SUBMISSIONS_PORT=$((BASE + 465)); SMTP_PORT=$((BASE + 25))

die() { echo "start.sh[$NAME]: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ "$VMAIL_UID" != 0 ] && [ "$VMAIL_GID" != 0 ] || die "vmail uid/gid must not be 0 (Dovecot refuses root mail access)"
export PATH="$PATH:/usr/sbin:/sbin"
for b in dovecot postfix sievec openssl; do
  command -v "$b" >/dev/null || die "missing $b (run test/mailstack/install.sh, or apt-get install postfix dovecot-imapd dovecot-lmtpd dovecot-sieve openssl)"
done
for f in /usr/lib/dovecot/imap /usr/lib/dovecot/lmtp; do
  [ -x "$f" ] || die "missing $f (apt-get install dovecot-imapd dovecot-lmtpd)"
done
# Postfix passes MAIL_CONFIG on; make sure a stale one from the caller does not leak in
unset MAIL_CONFIG

# refuse to run over a live instance or onto busy ports
if [ -f "$DIR/run/dovecot/master.pid" ] && kill -0 "$(cat "$DIR/run/dovecot/master.pid")" 2>/dev/null; then
  die "instance already running in $DIR (run stop.sh $NAME first)"
fi
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in $IMAP_PORT $IMAPS_PORT $SUBMISSION_PORT $SUBMISSIONS_PORT $SMTP_PORT; do
  port_busy "$p" && die "port $p on 127.0.0.1 is already in use"
done

# ---- validate users and junk senders before touching anything --------------
valid_addr() { [[ "$1" =~ ^[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$ ]]; }
for up in $USERS; do
  u="${up%%:*}"; pw="${up#*:}"
  valid_addr "$u" || die "user '$u' is not user@domain"
  [ "$u" != "$up" ] && [ -n "$pw" ] || die "user '$u' has no password (format user@domain:password)"
  case "$pw" in (*[:\"\\]*) die "password of '$u' contains ':', '\"' or '\\'";; esac
done
for a in $JUNK_SENDERS; do valid_addr "$a" || die "junk sender '$a' is not user@domain"; done
for a in $JUNK_RECIPIENTS $DISCARD_RECIPIENTS $VACATION_RECIPIENTS $DKIM_FAIL_SENDERS; do valid_addr "$a" || die "hostile recipient '$a' is not user@domain"; done
valid_domain() { [[ "$1" =~ ^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$ ]]; }
for d in $REWRITE_DOMAINS $REPLACE_DOMAINS; do valid_domain "$d" || die "message-id domain '$d' is not a domain"; done
case "$LEARNING" in ('') ;; (1) . "$HOME_DIR/learning-filter.sh"; learning_check;; (*) die "MAILSTACK_LEARNING must be 1 or empty";; esac
case "$IMAP_CAPABILITY" in (*[!A-Za-z0-9=+.\ -]*) die "MAILSTACK_IMAP_CAPABILITY holds a character that is no capability's";; esac

# ---- fresh directory tree --------------------------------------------------
# only ever wipe a directory that start.sh itself created before
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ] && [ ! -f "$DIR/.mailstack" ]; then
  die "$DIR exists, is not empty and was not made by start.sh; refusing to wipe it"
fi
rm -rf "$DIR"
mkdir -p "$DIR"/{etc/postfix,ssl,sieve,mail,run,state/dovecot,log,postfix/spool,postfix/data}
touch "$DIR/.mailstack"
d="$(cd "$DIR/.." && pwd)"
while [ "$d" != / ]; do
  [ "$(stat -c %A "$d" | cut -c10)" != - ] || die "$d is not world-searchable (o+x); the postfix/dovecot/vmail users cannot reach $DIR -- pick MAILSTACK_DIR under /tmp"
  d="$(dirname "$d")"
done
chmod 755 "$DIR" "$DIR"/{etc,etc/postfix,run,log,postfix}
chown "$VMAIL_UID:$VMAIL_GID" "$DIR/mail"
chmod 750 "$DIR/mail"
# Postfix wants its data_directory (master.lock, TLS caches) owned by mail_owner
chown postfix:postfix "$DIR/postfix/data"; chmod 700 "$DIR/postfix/data"

# ---- users / domains --------------------------------------------------------
# No subshell per user and each file opened once: a benchmark writes 10,000 users here.
declare -A KNOWN_DOMAINS=()
DOMAINS=""
{
  for up in $USERS; do
    u="${up%%:*}"; u="${u,,}"; pw="${up#*:}"
    # passwd-file: user:password:uid:gid:(gecos):home:(shell):extra
    printf '%s:{PLAIN}%s:%s:%s::%s::\n' "$u" "$pw" "$VMAIL_UID" "$VMAIL_GID" "$DIR/mail/${u#*@}/${u%%@*}" >&3
    printf '%s OK\n' "$u" >&4
    d="${u#*@}"
    if [ -z "${KNOWN_DOMAINS[$d]:-}" ]; then KNOWN_DOMAINS[$d]=1; DOMAINS="${DOMAINS:+$DOMAINS }$d"; fi
  done
} 3>"$DIR/etc/users" 4>"$DIR/etc/postfix/vmailbox"
[ -n "$DOMAINS" ] || die "no users"
FIRST_DOMAIN="${DOMAINS%% *}"
# Dovecot's auth process runs as user "dovecot": it must be able to read the file
chown root:dovecot "$DIR/etc/users"; chmod 640 "$DIR/etc/users"

# ---- self-signed cert (EC: instant) ----------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
  -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,DNS:mail.test,IP:127.0.0.1" \
  -keyout "$DIR/ssl/key.pem" -out "$DIR/ssl/cert.pem" 2>/dev/null
chmod 600 "$DIR/ssl/key.pem"; chmod 644 "$DIR/ssl/cert.pem"

# ---- render templates -------------------------------------------------------
render() { # template -> output
  sed -e "s#{{DIR}}#$DIR#g" -e "s#{{NAME}}#$NAME#g" \
      -e "s#{{IMAP_PORT}}#$IMAP_PORT#g" -e "s#{{IMAPS_PORT}}#$IMAPS_PORT#g" \
      -e "s#{{SUBMISSION_PORT}}#$SUBMISSION_PORT#g" -e "s#{{SUBMISSIONS_PORT}}#$SUBMISSIONS_PORT#g" \
      -e "s#{{SMTP_PORT}}#$SMTP_PORT#g" -e "s#{{DOMAINS}}#$DOMAINS#g" \
      -e "s#{{FIRST_DOMAIN}}#$FIRST_DOMAIN#g" \
      -e "s#{{VMAIL_UID}}#$VMAIL_UID#g" -e "s#{{VMAIL_GID}}#$VMAIL_GID#g" "$1" > "$2"
  if grep -qE '\{\{[A-Z_]+\}\}' "$2"; then die "unrendered placeholder in $2"; fi
}
T="$HOME_DIR/templates"
render "$T/dovecot.conf.in"      "$DIR/etc/dovecot.conf"
render "$T/postfix-main.cf.in"   "$DIR/etc/postfix/main.cf"
render "$T/postfix-master.cf.in" "$DIR/etc/postfix/master.cf"
# Optional: Message-IDs rewritten on delivery the way Outlook.com does. The cleanup service keeps
# the original (X-Microsoft-Original-Message-ID, REWRITE domains only); the LMTP client that
# hands the mail to Dovecot replaces the Message-ID with one on Microsoft's domain that holds
# no copy of the original as a whole (`local=domain@…`).
if [ -n "$REWRITE_DOMAINS$REPLACE_DOMAINS" ]; then
  : > "$DIR/etc/postfix/keep_original_id"; : > "$DIR/etc/postfix/replace_id"
  for d in $REWRITE_DOMAINS; do
    e="$(printf '%s' "$d" | sed 's/\./\\./g')"
    printf '/^Message-ID:[[:space:]]*<([^<>@[:space:]]+)@(%s)>[[:space:]]*$/ PREPEND X-Microsoft-Original-Message-ID: <$1@$2>\n' "$e" >> "$DIR/etc/postfix/keep_original_id"
  done
  for d in $REWRITE_DOMAINS $REPLACE_DOMAINS; do
    e="$(printf '%s' "$d" | sed 's/\./\\./g')"
    printf '/^Message-ID:[[:space:]]*<([^<>@=[:space:]]+)@(%s)>[[:space:]]*$/ REPLACE Message-ID: <$1=$2@AM9PR07MB7192.eurprd07.prod.outlook.test>\n' "$e" >> "$DIR/etc/postfix/replace_id"
  done
  printf 'header_checks = regexp:%s\nlmtp_header_checks = regexp:%s\n' \
    "$DIR/etc/postfix/keep_original_id" "$DIR/etc/postfix/replace_id" >> "$DIR/etc/postfix/main.cf"
fi
# Optional: tokens (XOAUTH2 / OAUTHBEARER) checked at an OAuth server's introspection endpoint,
# after the password file. Postfix submission offers the mechanisms by itself (SASL via Dovecot).
if [ -n "${MAILSTACK_OAUTH2_INTROSPECTION_URL:-}" ]; then
  cat > "$DIR/etc/dovecot-oauth2.conf.ext" <<EOF
introspection_mode = post
introspection_url = $MAILSTACK_OAUTH2_INTROSPECTION_URL
username_attribute = ${MAILSTACK_OAUTH2_USERNAME_ATTRIBUTE:-username}
active_attribute = active
active_value = true
EOF
  chmod 644 "$DIR/etc/dovecot-oauth2.conf.ext"
  cat >> "$DIR/etc/dovecot.conf" <<EOF
auth_mechanisms = plain login xoauth2 oauthbearer
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = $DIR/etc/dovecot-oauth2.conf.ext
}
EOF
fi
if [ -n "$IMAP_CAPABILITY" ]; then
  printf 'protocol imap {\n  imap_capability = %s\n}\n' "$IMAP_CAPABILITY" >> "$DIR/etc/dovecot.conf"
fi
{
  cat "$T/before.sieve"
  if [ -n "$AUTH_RESULTS" ]; then
    # The receiving domain's own verdict, on top of the header like a receiving server writes it.
    printf 'if address :domain :matches "to" "*" { set "receiver" "${1}"; }\n'
    printf 'if address :domain :matches "from" "*" { set "senderdomain" "${1}"; }\n'
    printf 'set "dkim" "pass";\n'
    for a in $DKIM_FAIL_SENDERS; do
      a="$(printf '%s' "$a" | tr 'A-Z' 'a-z')"
      printf 'if address :is "from" "%s" { set "dkim" "fail"; }\n' "$a"
    done
    printf 'addheader "X-Spam-Status" "No, score=0.4 required=5.0 tests=ALL_TRUSTED,HTML_MESSAGE autolearn=ham version=3.4.6";\n'
    printf 'addheader "Authentication-Results" "${receiver}; spf=pass smtp.mailfrom=${senderdomain}; dkim=${dkim} header.d=${senderdomain}; dmarc=${dkim} header.from=${senderdomain}";\n'
  fi
  for a in $JUNK_SENDERS; do
    a="$(printf '%s' "$a" | tr 'A-Z' 'a-z')"
    printf 'if address :is "from" "%s" {\n  fileinto "Junk";\n  stop;\n}\n' "$a"
  done
  for a in $JUNK_RECIPIENTS; do
    a="$(printf '%s' "$a" | tr 'A-Z' 'a-z')"
    printf 'if address :is "to" "%s" {\n  fileinto "Junk";\n  stop;\n}\n' "$a"
  done
  for a in $DISCARD_RECIPIENTS; do
    a="$(printf '%s' "$a" | tr 'A-Z' 'a-z')"
    printf 'if allof (address :is "to" "%s", not address :is "from" "%s") {\n  discard;\n  stop;\n}\n' "$a" "$a"
  done
  for a in $VACATION_RECIPIENTS; do
    a="$(printf '%s' "$a" | tr 'A-Z' 'a-z')"
    printf 'if address :is "to" "%s" {\n  vacation :days 1 :subject "Automatic reply: out of office" "I am out of the office and will answer when I am back.";\n}\n' "$a"
  done
} > "$DIR/sieve/before.sieve"
[ -z "$LEARNING" ] || learning_prepare
# Postfix re-reads a main.cf / texthash map modified within the last ~2 s in a
# 300 ms sleep loop (guard against half-written files): back-date what we wrote
# so "postfix start" takes ~0.2 s instead of ~2.3 s.
touch -d "@$(( $(date +%s) - 60 ))" "$DIR/etc/postfix/main.cf" "$DIR/etc/postfix/master.cf" "$DIR/etc/postfix/vmailbox"

# ---- start ------------------------------------------------------------------
# if anything below fails, stop whatever this instance already started
trap 'rc=$?; if [ $rc -ne 0 ]; then MAILSTACK_DIR="$DIR" "$HOME_DIR/stop.sh" "$NAME" >/dev/null 2>&1; fi; exit $rc' EXIT
[ -z "$LEARNING" ] || learning_start
# Pre-compile the global Sieve script (LMTP runs as the vmail uid and could not
# write before.svbin next to it).
sievec -c "$DIR/etc/dovecot.conf" "$DIR/sieve/before.sieve" || die "sievec failed"
[ -z "$LEARNING" ] || learning_compile

# Dovecot's master keeps the stderr it was started with open for its whole life:
# send it to a file, or a caller that captures start.sh's output (Node's execFile,
# a "| tee", ...) would wait for EOF forever.
dovecot -c "$DIR/etc/dovecot.conf" </dev/null >/dev/null 2>>"$DIR/log/dovecot.stderr" \
  || { cat "$DIR/log/dovecot.stderr" >&2; tail -5 "$DIR/log/dovecot.log" >&2 2>/dev/null
       die "dovecot failed to start; see $DIR/log/dovecot.log"; }
postfix -c "$DIR/etc/postfix" start </dev/null >"$DIR/log/postfix-start.log" 2>&1 \
  || { cat "$DIR/log/postfix-start.log" >&2; tail -5 "$DIR/log/postfix.log" >&2 2>/dev/null
       die "postfix failed to start; see $DIR/log/postfix.log"; }

# ---- wait until every listener answers with its greeting ---------------------
greets() { # port expected-prefix: plain TCP, read the first line
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && IFS= read -r -t 2 line <&3 && [[ "$line" == "$1"* ]]' "$1" "$2" 2>/dev/null
}
tls_ok() { # port: implicit-TLS handshake succeeds
  timeout 3 openssl s_client -brief -connect "127.0.0.1:$1" </dev/null 2>&1 | grep -q 'CONNECTION ESTABLISHED'
}
deadline=$(( $(date +%s) + READY_TIMEOUT ))
ready=0
while [ "$(date +%s)" -lt "$deadline" ]; do
  if [ -S "$DIR/run/dovecot/lmtp" ] && [ -S "$DIR/run/dovecot/auth-postfix" ] \
     && greets "$IMAP_PORT" '* OK' && greets "$SUBMISSION_PORT" 220 && greets "$SMTP_PORT" 220 \
     && tls_ok "$IMAPS_PORT" && tls_ok "$SUBMISSIONS_PORT" && { [ -z "$LEARNING" ] || learning_ready; }; then
    ready=1; break
  fi
  sleep 0.1
done
[ "$ready" = 1 ] || die "not ready after ${READY_TIMEOUT}s; see $DIR/log/"
[ -z "$LEARNING" ] || learning_seed

cat > "$DIR/stack.env" <<EOF
MAILSTACK_NAME=$NAME
MAILSTACK_DIR=$DIR
MAILSTACK_HOST=127.0.0.1
MAILSTACK_IMAP_PORT=$IMAP_PORT
MAILSTACK_IMAPS_PORT=$IMAPS_PORT
MAILSTACK_SUBMISSION_PORT=$SUBMISSION_PORT
MAILSTACK_SUBMISSIONS_PORT=$SUBMISSIONS_PORT
MAILSTACK_SMTP_PORT=$SMTP_PORT
MAILSTACK_CA_CERT=$DIR/ssl/cert.pem
MAILSTACK_DOVECOT_PID=$(cat "$DIR/run/dovecot/master.pid")
MAILSTACK_POSTFIX_PID=$(sed -n 's/ //gp' "$DIR/postfix/spool/pid/master.pid")
EOF
[ -z "$LEARNING" ] || echo "MAILSTACK_SPAMD_PORT=$SPAMD_PORT" >> "$DIR/stack.env"
# Every value below was validated above (no quotes or backslashes), so plain
# printf makes valid JSON.
{
  printf '{"name":"%s","dir":"%s","host":"127.0.0.1","imapPort":%s,"imapsPort":%s,' "$NAME" "$DIR" "$IMAP_PORT" "$IMAPS_PORT"
  printf '"submissionPort":%s,"submissionsPort":%s,"smtpPort":%s,"caCert":"%s","users":[' "$SUBMISSION_PORT" "$SUBMISSIONS_PORT" "$SMTP_PORT" "$DIR/ssl/cert.pem"
  sep=""; for up in $USERS; do u="${up%%:*}"; printf '%s{"email":"%s","password":"%s"}' "$sep" "${u,,}" "${up#*:}"; sep=","; done
  printf '],"junkSenders":['
  sep=""; for a in $JUNK_SENDERS; do printf '%s"%s"' "$sep" "$(printf '%s' "$a" | tr 'A-Z' 'a-z')"; sep=","; done
  printf ']'
  [ -z "$LEARNING" ] || printf ',"spamdPort":%s' "$SPAMD_PORT"
  printf '}\n'
} > "$DIR/stack.json"
chmod 600 "$DIR/stack.json" "$DIR/stack.env"
cat "$DIR/stack.env"
