#!/usr/bin/env bash
# Debian's Chromium for the web app's browser tests (playwright-core drives it; it never downloads a browser).
# Idempotent: does nothing when /usr/bin/chromium is already there.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  /usr/bin/chromium --version 2>/dev/null || true
  exit 0
fi

if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "ensure-chromium: /usr/bin/chromium is missing and this user cannot install packages" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y chromium; then
  $SUDO apt-get update
  $SUDO apt-get install -y chromium
fi
/usr/bin/chromium --version
