#!/usr/bin/env bash
# Installs nginx from Debian when missing (the deployment test puts it in front of the instances).
set -euo pipefail
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
echo "nginx not found: installing it from Debian" >&2
# The package would start a system nginx on port 80; the test runs its own.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends nginx-light >/dev/null || apt-get install -y -qq --no-install-recommends nginx >/dev/null
rm -f /usr/sbin/policy-rc.d
pkill -x nginx >/dev/null 2>&1 || true
