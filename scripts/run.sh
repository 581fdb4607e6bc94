#!/usr/bin/env bash
# The main job from a fresh clone: install npm if missing (the registry URL
# comes from npm's own configuration), build optimised, and run cc-teardown
# with the arguments given (paths stay relative to where you are).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/need.sh"
need npm:npm
# `--quiet` keeps cargo's lines out of the output; the first build is long
# (tens of minutes on a small machine) and would otherwise look like a hang.
built="${CARGO_TARGET_DIR:-$here/../target}/release/cc-teardown"
[ -x "$built" ] || echo "building cc-teardown (optimised, once; this takes a while)" >&2
exec cargo run --release --locked --quiet --manifest-path "$here/../Cargo.toml" -- "$@"
