#!/bin/bash
# Pushes the current branch.
set -euo pipefail
branch=$(git rev-parse --abbrev-ref HEAD)
git push origin "$branch"
