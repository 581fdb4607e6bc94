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
#
# Each test runs the tool in a sandbox of its own (tests/common/run.rs);
# real builds are downloaded once into $CC_TEARDOWN_CACHE if set, else
# target/tmp/downloads. The user's own cache folder must come out of the
# suite as it went in: its listing (names, sizes, times) is compared.
#
# CC_TEARDOWN_OFFLINE=1 builds the suite without the tests that download
# real builds (switching it rebuilds the crate): libtest lists each as
# "ignored, CC_TEARDOWN_OFFLINE=1: …", and the count is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh
need node:nodejs npm:npm chromium:chromium python3:python3

user_cache="${XDG_CACHE_HOME:-$HOME/.cache}/cc-teardown"
fingerprint() {
  if [ -e "$user_cache" ]; then
    find "$user_cache" -printf '%P %y %s %T@\n' | LC_ALL=C sort
  else
    echo "(absent)"
  fi
}
before="$(fingerprint)"

# A clean checkout gains nothing from incremental compilation, and its
# files (gigabytes for this crate) count against the disk the downloaded
# builds need too: CI once ran out of space while fetching one.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# The suite's own files (the build, the real builds it downloads, each
# test's sandbox) take about 10 GB; a disk shared with other work can run
# short of that part-way, and a download then fails with "No space left on
# device". Say how much there was, before and after, so such a failure is
# read at once.
free_kb() {
  df -Pk "${CARGO_TARGET_DIR:-target}" 2>/dev/null | awk 'NR == 2 { print $4 }'
}
space() {
  awk -v kb="$(free_kb)" 'BEGIN { printf "%.1f GB free", kb / 1048576 }'
}
mkdir -p "${CARGO_TARGET_DIR:-target}"
echo "disk before the tests: $(space)"
kb="$(free_kb)"
if [ "${kb:-0}" -lt $((10 * 1048576)) ]; then
  echo "warning: less than 10 GB free; the tests may run out of space while downloading builds" >&2
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --locked --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?

echo "disk after the tests: $(space)"
after="$(fingerprint)"
if [ "$before" != "$after" ]; then
  echo "error: $user_cache (the user's own cache) changed while the tests ran; they must not touch it:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  status=1
fi

if [ "${CC_TEARDOWN_OFFLINE:-}" = 1 ]; then
  skipped="$(grep -c '\.\.\. ignored, CC_TEARDOWN_OFFLINE=1' "$log" || true)"
  echo "CC_TEARDOWN_OFFLINE=1: $skipped tests skipped (they download real builds)"
fi
exit "$status"
