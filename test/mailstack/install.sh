#!/usr/bin/env bash
# Install what start.sh needs on Debian/Ubuntu, as root, without leaving a
# system-wide Postfix/Dovecot running. Idempotent: does nothing when all is there.
#
#   sudo test/mailstack/install.sh
set -euo pipefail
PKGS="postfix dovecot-imapd dovecot-lmtpd dovecot-sieve openssl"
[ "$(id -u)" = 0 ] || { echo "install.sh: must run as root" >&2; exit 1; }
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && { echo "install.sh: all present"; exit 0; }

export DEBIAN_FRONTEND=noninteractive
# "No configuration": no /etc/postfix/main.cf is written, so the package never
# starts a system Postfix (the test stack never reads /etc/postfix anyway).
echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections

# Container images usually ship /usr/sbin/policy-rc.d ("exit 101") so that package
# scripts start no services. Without one, dovecot-core's postinst would start a
# system Dovecot on 143/993; add a temporary one for the duration of the install.
tmp_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
  tmp_policy=1
fi
trap '[ -n "$tmp_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT

apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
dpkg-query -W -f='${Package} ${Version}\n' postfix dovecot-core dovecot-imapd dovecot-lmtpd dovecot-sieve
