#!/bin/sh
# Runs the nearest package's test suite; falls back to npm when pnpm is absent.
set -eu
if command -v pnpm >/dev/null 2>&1; then exec pnpm vitest run "$@"; fi
exec npm test -- "$@"
