#!/usr/bin/env bash
# Foundation benchmark for cc-teardown: info / ls / verify / hash / extract on
# two real published builds, against a read-the-whole-file baseline.
#
#   bench/run.sh            build release, fetch the builds, run, print a table
#
# Environment:
#   CC_TEARDOWN_CACHE   cache dir for `cc-teardown fetch` (default: its own)
#   BENCH_WORK          scratch dir (default: bench/.work, git-ignored)
#   BENCH_NO_FALLBACK=1 fail instead of falling back to `npm pack` when
#                       `cc-teardown fetch` cannot download a build
#
# Results: $BENCH_WORK/results/*.json (hyperfine exports, meta.json, rss.json)
# and $BENCH_WORK/results/summary.md (the table printed at the end).
# Exit status: 0 when every check passes, 1 when one fails, 2 on error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
WORK="${BENCH_WORK:-$BENCH/.work}"
RES="$WORK/results"
BIN="$ROOT/target/release/cc-teardown"

PLATFORM=darwin-arm64
V_MONO=2.1.220          # one 21.6 MB bundle in a 256 MB file
V_SPLIT=2.1.260         # code-split, ~1,830 modules
BUNDLE_SHA_MONO=d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 2; }

# --- tools -------------------------------------------------------------------
need_apt=()
command -v hyperfine >/dev/null 2>&1 || need_apt+=(hyperfine)
[ -x /usr/bin/time ] || need_apt+=(time)
if [ "${#need_apt[@]}" -gt 0 ]; then
    log "installing ${need_apt[*]} (apt-get)"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
command -v python3 >/dev/null 2>&1 || die "python3 is needed (baseline and summary)"

# --- build -------------------------------------------------------------------
log "cargo build --release"
(cd "$ROOT" && cargo build --release --quiet)
[ -x "$BIN" ] || die "no $BIN after the build"

mkdir -p "$RES"
rm -f "$RES"/*.json "$RES"/summary.md

# --- the builds ----------------------------------------------------------------
# Normally `cc-teardown fetch` (cache hit: no network). If it cannot download
# (e.g. a TLS-intercepting proxy whose CA it does not trust), fall back to
# `npm pack`, which uses npm's own registry configuration and checks the
# tarball's integrity, and read the executable from the unpacked package.
# get_build VERSION: sets BUILD_PATH and BUILD_SOURCE.
get_build() {
    local v="$1" out err
    err="$WORK/fetch-$v.err"
    if out="$("$BIN" fetch "$v" --platform "$PLATFORM" --quiet 2>"$err")" && [ -f "$out" ]; then
        BUILD_PATH="$out"
        BUILD_SOURCE="cc-teardown fetch"
        return
    fi
    log "cc-teardown fetch $v --platform $PLATFORM failed: $(tail -n1 "$err")"
    [ "${BENCH_NO_FALLBACK:-0}" = 1 ] && die "fetch failed and BENCH_NO_FALLBACK=1"
    command -v npm >/dev/null 2>&1 || die "fetch failed and npm is not installed for the fallback"
    local dir="$WORK/npm-pack/$v"
    if [ ! -f "$dir/package/claude" ]; then
        log "fallback: npm pack @anthropic-ai/claude-code-$PLATFORM@$v (registry: npm config)"
        rm -rf "$dir" && mkdir -p "$dir"
        local tgz
        tgz="$(cd "$dir" && npm pack --silent "@anthropic-ai/claude-code-$PLATFORM@$v" | tail -n1)"
        tar -xzf "$dir/$tgz" -C "$dir"
        rm -f "$dir/$tgz"
    fi
    [ -f "$dir/package/claude" ] || die "no executable in the npm package for $v"
    BUILD_PATH="$dir/package/claude"
    BUILD_SOURCE="npm pack (fallback: cc-teardown fetch failed)"
}
log "fetching builds"
get_build "$V_MONO";  F_MONO="$BUILD_PATH";  S_MONO="$BUILD_SOURCE"
get_build "$V_SPLIT"; F_SPLIT="$BUILD_PATH"; S_SPLIT="$BUILD_SOURCE"
log "$V_MONO: $F_MONO ($S_MONO)"
log "$V_SPLIT: $F_SPLIT ($S_SPLIT)"

# --- correctness before speed ----------------------------------------------------
log "checking that cc-teardown and the baseline agree on the bundle SHA-256"
ours_sha="$("$BIN" info "$F_MONO" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bundle"]["sha256"])')"
base_sha="$(python3 "$BENCH/baseline_read_whole.py" "$F_MONO")"
[ "$ours_sha" = "$base_sha" ] || die "bundle SHA-256 differs: cc-teardown $ours_sha, baseline $base_sha"
[ "$ours_sha" = "$BUNDLE_SHA_MONO" ] || die "bundle SHA-256 $ours_sha is not the published $BUNDLE_SHA_MONO"
"$BIN" verify "$F_MONO" --sha256 "$BUNDLE_SHA_MONO" --quiet >/dev/null \
    || die "verify does not accept the known bundle SHA-256"
split_modules="$("$BIN" info "$F_SPLIT" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bun"]["modules"])')"

# --- a quiet machine, a warm page cache --------------------------------------------
# Other work on the machine skews every figure: record the load average (its
# 1-minute figure also counts the build above, if that compiled anything).
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
    log "warning: load average $LOAD_BEFORE on $(nproc) cores; timings will be pessimistic"
fi

cat "$F_MONO" "$F_SPLIT" >/dev/null

# --- timings (hyperfine, no shell, warmup runs) -------------------------------------
XDIR="$WORK/extract-out"   # a symlink to the current run's folder
XRUNS="$WORK/extract-runs"
HF=(hyperfine -N --style basic)
# extract goes first. On this VM, memory freed just before (the baseline's
# 256 MB buffer, a deleted output folder's page cache) makes the next page
# allocations cost a lot of kernel time for a while: timed after the baseline,
# extract's system time grows ~10x. Each run writes into a new, empty folder
# (as a user would): the prepare step points $XDIR at a fresh one. Deleting
# the previous output right before each run is timed last, for reference only.
log "hyperfine: extract ($V_SPLIT, $split_modules modules), each run into a new folder"
rm -rf "$XRUNS" "$XDIR" && mkdir -p "$XRUNS"
"${HF[@]}" --warmup 5 --min-runs 10 --export-json "$RES/extract.json" \
    --prepare "bash -c 'ln -sfn \"\$(mktemp -d -p $XRUNS)\" $XDIR'" \
    -n "cc-teardown extract" "$BIN extract $F_SPLIT -o $XDIR --quiet"

log "hyperfine: info vs read-whole-file baseline ($V_MONO)"
"${HF[@]}" --warmup 5 --min-runs 30 --export-json "$RES/info_vs_baseline.json" \
    -n "cc-teardown info" "$BIN info $F_MONO --no-signature" \
    -n "baseline (read whole file)" "python3 $BENCH/baseline_read_whole.py $F_MONO"
log "hyperfine: ls, verify, hash ($V_MONO)"
"${HF[@]}" --warmup 5 --min-runs 30 --export-json "$RES/ls.json" \
    -n "cc-teardown ls" "$BIN ls $F_MONO"
"${HF[@]}" --warmup 5 --min-runs 30 --export-json "$RES/verify.json" \
    -n "cc-teardown verify" "$BIN verify $F_MONO --sha256 $BUNDLE_SHA_MONO"
"${HF[@]}" --warmup 5 --min-runs 10 --export-json "$RES/hash.json" \
    -n "cc-teardown hash" "$BIN hash $F_MONO"

# --- peak RSS: the file is mmap'd, so RSS counts every page that was touched -------
log "peak RSS (/usr/bin/time -f %M)"
rss() { # label, command...
    local label="$1" kb
    shift
    kb="$(/usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n1)"
    printf '"%s": %s' "$label" "$kb"
}
{
    printf '{'
    rss info "$BIN" info "$F_MONO" --no-signature; printf ', '
    rss ls "$BIN" ls "$F_MONO"; printf ', '
    rss verify "$BIN" verify "$F_MONO" --sha256 "$BUNDLE_SHA_MONO"; printf ', '
    rss hash "$BIN" hash "$F_MONO"; printf ', '
    rss baseline python3 "$BENCH/baseline_read_whole.py" "$F_MONO"; printf ', '
    rss extract "$BIN" extract "$F_SPLIT" -o "$(mktemp -d -p "$XRUNS")" --quiet
    printf '}\n'
} >"$RES/rss.json"

log "hyperfine: extract again, deleting the previous output before each run (reference)"
XREUSE="$WORK/extract-reused"
"${HF[@]}" --warmup 2 --min-runs 10 --export-json "$RES/extract_reused.json" \
    --prepare "rm -rf $XREUSE" \
    -n "cc-teardown extract (output deleted just before)" "$BIN extract $F_SPLIT -o $XREUSE --quiet"
rm -rf "$XREUSE" "$XRUNS" "$XDIR"

# --- meta ---------------------------------------------------------------------------
python3 - "$RES/meta.json" <<EOF
import json, os, platform, subprocess, sys, datetime
def sh(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return None
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "cpu": cpu,
    "cores": os.cpu_count(),
    "kernel": platform.release(),
    "hyperfine": sh("hyperfine", "--version"),
    "python": platform.python_version(),
    "cc_teardown": sh("$BIN", "--version"),
    "git_rev": sh("git", "-C", "$ROOT", "describe", "--always", "--dirty"),
    "load_before": [float(x) for x in "$LOAD_BEFORE".split()],
    "load_after": [float(x) for x in open("/proc/loadavg").read().split()[:3]],
    "platform": "$PLATFORM",
    "mono": {"version": "$V_MONO", "path": "$F_MONO", "bytes": os.path.getsize("$F_MONO"),
             "source": "$S_MONO", "bundle_sha256": "$ours_sha"},
    "split": {"version": "$V_SPLIT", "path": "$F_SPLIT", "bytes": os.path.getsize("$F_SPLIT"),
              "source": "$S_SPLIT", "modules": int("$split_modules")},
}, open(sys.argv[1], "w"), indent=2)
EOF

# --- table + checks -----------------------------------------------------------------
python3 "$BENCH/summarize.py" "$RES"
