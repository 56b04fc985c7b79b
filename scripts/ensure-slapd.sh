#!/usr/bin/env bash
# Installs OpenLDAP's slapd and the ldap-utils from Debian when missing (the LDAP tests need them).
set -euo pipefail
if command -v slapd >/dev/null 2>&1 || [ -x /usr/sbin/slapd ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
echo "slapd not found: installing slapd and ldap-utils from Debian" >&2
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends slapd ldap-utils >/dev/null
# The package starts a system slapd on the default port; the tests run their own.
pkill -x slapd >/dev/null 2>&1 || true
