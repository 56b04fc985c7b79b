#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (playwright-core drives it) when missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
echo "chromium not found: installing it from Debian" >&2
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
