#!/usr/bin/env bash
# The main job from a fresh clone: install npm if missing (the registry URL
# comes from npm's own configuration), build optimised, and run cc-teardown
# with the arguments given (paths stay relative to where you are).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/need.sh"
need npm:npm
exec cargo run --release --locked --quiet --manifest-path "$here/../Cargo.toml" -- "$@"
