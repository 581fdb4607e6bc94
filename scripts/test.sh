#!/usr/bin/env bash
# The project's test command (README, and what CI runs through .ci/run).
#
# Installs what the tests need and this machine lacks, then runs every suite:
# - npm: the registry URL comes from npm's own configuration;
# - node: runs one fixture as an oracle for the static evaluator;
# - Debian's chromium: the HTML pages are rendered in a real headless browser.
# - python3: measures a command's own peak memory in the store bounds tests.
# `--no-fail-fast` so that one failing suite never hides the others.
# Extra arguments go to `cargo test` (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh
need node:nodejs npm:npm chromium:chromium python3:python3
exec cargo test --locked --no-fail-fast "$@"
