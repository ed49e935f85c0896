#!/bin/sh
# Rewrites the whole tree in Prettier's layout and checks that lint still passes: run once, after the
# branches that move files are merged, and commit the result on its own ("Format the tree with Prettier").
set -eu
cd "$(dirname "$0")/.."
npx prettier --write . >/dev/null
npx prettier --check .
npx eslint .
npm run typecheck
git diff --shortstat
