#!/usr/bin/env bash
# JavaScript-layer benchmark for cc-teardown: parse + pretty-print + line map
# of the 2.1.220 darwin-arm64 entry module (21.6 MB), against prettier and
# js-beautify on the same extracted file, plus `pretty` of every JavaScript
# module of the code-split 2.1.260 build.
#
#   bench/js.sh             build release, fetch the builds, install the peers
#                           with npm into a scratch folder, run, print a table
#
# Environment:
#   CC_TEARDOWN_CACHE   cache dir for `cc-teardown fetch` (default: its own)
#   BENCH_WORK          scratch dir (default: bench/.work, git-ignored)
#   BENCH_NO_FALLBACK=1 fail instead of falling back to `npm pack` when
#                       `cc-teardown fetch` cannot download a build
#   PRETTIER_VERSION    prettier to install (default below)
#   JSBEAUTIFY_VERSION  js-beautify to install (default below)
#   BENCH_JS_NO_PRETTIER=1  skip prettier (~40-90 s, ~4 GB); its checks then FAIL
#
# Every file written here (the extracted bundle, the pretty outputs, the
# peers' node_modules) stays under $BENCH_WORK, which git ignores.
# Results: $BENCH_WORK/results-js/*.json and $BENCH_WORK/results-js/summary.md.
# Exit status: 0 when every check passes, 1 when one fails, 2 on error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
WORK="${BENCH_WORK:-$BENCH/.work}"
RES="$WORK/results-js"
JS="$WORK/js"                # extracted bundle and pretty outputs
NODE_DIR="$WORK/node"        # npm --prefix for prettier and js-beautify
BIN="$ROOT/target/release/cc-teardown"

PLATFORM=darwin-arm64
V_MONO=2.1.220          # one 21.6 MB bundle
V_SPLIT=2.1.260         # code-split, ~1,640 JavaScript modules
BUNDLE_SHA_MONO=d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120
PRETTIER_VERSION="${PRETTIER_VERSION:-3.10.1}"
JSBEAUTIFY_VERSION="${JSBEAUTIFY_VERSION:-2.0.3}"
SPLIT_RUNS=5            # `pretty --json` runs whose phase timings are kept

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'bench/js: %s\n' "$*" >&2; exit 2; }

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
command -v python3 >/dev/null 2>&1 || die "python3 is needed (summary)"
command -v node >/dev/null 2>&1 || die "node is needed (prettier, js-beautify)"
command -v npm >/dev/null 2>&1 || die "npm is needed (to install prettier and js-beautify)"

# --- build -------------------------------------------------------------------
log "cargo build --release"
(cd "$ROOT" && cargo build --release --quiet)
[ -x "$BIN" ] || die "no $BIN after the build"
mkdir -p "$RES" "$JS"
# Time a copy: a build started elsewhere during the run must not swap the binary.
cp "$BIN" "$JS/cc-teardown"
BIN="$JS/cc-teardown"
GIT_REV="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
rm -f "$RES"/*.json "$RES"/*.time "$RES"/loads.txt "$RES"/summary.md

# --- the builds (same as bench/run.sh) -------------------------------------------
# get_build VERSION: sets BUILD_PATH and BUILD_SOURCE.
get_build() {
    local v="$1" err
    err="$WORK/fetch-$v.err"
    if out="$("$BIN" fetch "$v" --platform "$PLATFORM" --quiet 2>"$err")" && [ -f "$out" ]; then
        BUILD_PATH="$out"
        BUILD_SOURCE="cc-teardown fetch"
        return
    fi
    log "cc-teardown fetch $v --platform $PLATFORM failed: $(tail -n1 "$err")"
    [ "${BENCH_NO_FALLBACK:-0}" = 1 ] && die "fetch failed and BENCH_NO_FALLBACK=1"
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
# The "from the binary" runs name the build as a user would (npm:VERSION/PLATFORM,
# a cache hit) when fetch worked, else by the path of the unpacked executable.
if [ "$S_MONO" = "cc-teardown fetch" ]; then T_MONO="npm:$V_MONO/$PLATFORM"; else T_MONO="$F_MONO"; fi
if [ "$S_SPLIT" = "cc-teardown fetch" ]; then T_SPLIT="npm:$V_SPLIT/$PLATFORM"; else T_SPLIT="$F_SPLIT"; fi
log "$V_MONO: $F_MONO ($S_MONO)"
log "$V_SPLIT: $F_SPLIT ($S_SPLIT)"

# --- the input every tool reads: the extracted entry module -----------------------
log "extracting $V_MONO into $JS/x$V_MONO"
rm -rf "$JS/x$V_MONO"
"$BIN" extract "$F_MONO" -o "$JS/x$V_MONO" --quiet
CLI="$JS/x$V_MONO/src/entrypoints/cli.js"
[ -f "$CLI" ] || die "no $CLI after extract"
cli_sha="$(sha256sum "$CLI" | cut -d' ' -f1)"
[ "$cli_sha" = "$BUNDLE_SHA_MONO" ] || die "extracted cli.js SHA-256 $cli_sha is not the published $BUNDLE_SHA_MONO"

# --- the peers: npm install into a scratch folder ---------------------------------
NM="$NODE_DIR/node_modules"
have_version() { # package, version
    [ -f "$NM/$1/package.json" ] &&
        [ "$(node -p "require('$NM/$1/package.json').version")" = "$2" ]
}
if ! have_version prettier "$PRETTIER_VERSION" || ! have_version js-beautify "$JSBEAUTIFY_VERSION"; then
    log "npm install --prefix $NODE_DIR prettier@$PRETTIER_VERSION js-beautify@$JSBEAUTIFY_VERSION (registry: npm config)"
    mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error \
        "prettier@$PRETTIER_VERSION" "js-beautify@$JSBEAUTIFY_VERSION" >/dev/null
fi
have_version prettier "$PRETTIER_VERSION" || die "prettier $PRETTIER_VERSION is not installed in $NODE_DIR"
have_version js-beautify "$JSBEAUTIFY_VERSION" || die "js-beautify $JSBEAUTIFY_VERSION is not installed in $NODE_DIR"
PRETTIER_JS="$NM/prettier/bin/prettier.cjs"
JSB_JS="$NM/js-beautify/js/bin/js-beautify.js"

# Every tool reads $CLI and writes its whole output to a file.
OUT_OURS="$JS/ours.js"             # + ours.js.linemap.json
OUT_BIN="$JS/ours-from-binary.js"
OUT_JSB="$JS/js-beautify.js"
OUT_PRETTIER="$JS/prettier.js"
# prettier: its own defaults, no config file; --ignore-path /dev/null because
# prettier 3 honours .gitignore by default, bench/.work is git-ignored, and an
# ignored file is passed through unchanged (which would time a copy).
PRETTIER_CMD=(node --max-old-space-size=8192 "$PRETTIER_JS" --no-config --no-editorconfig
              --ignore-path /dev/null "$CLI")
JSB_CMD=(node "$JSB_JS" -o "$OUT_JSB" "$CLI")   # its defaults (4-space indent, like ours)

# --- a quiet machine, a warm page cache --------------------------------------------
# The build above (or other work) raises the load average: wait up to
# BENCH_QUIET_WAIT seconds (default 180) for the 1-minute figure to fall below
# 0.5, then record it anyway. The load is also recorded before each group.
wait_quiet() {
    local waited=0 limit="${BENCH_QUIET_WAIT:-180}"
    while awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l >= 0.5) }' \
        && [ "$waited" -lt "$limit" ]; do
        [ "$waited" -eq 0 ] && log "waiting up to ${limit}s for a quiet machine (load $(cut -d' ' -f1-3 /proc/loadavg))"
        sleep 10
        waited=$((waited + 10))
    done
}
LOADS="$RES/loads.txt"      # "label l1 l5 l15" per line
mark_load() { printf '%s %s\n' "$1" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$LOADS"; }
wait_quiet
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
mark_load ours
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
    log "warning: load average $LOAD_BEFORE on $(nproc) cores; timings will be pessimistic"
fi
cat "$F_MONO" "$F_SPLIT" "$CLI" >/dev/null

HF=(hyperfine -N --style basic)

# --- ours, timed first (before the peers free gigabytes of memory) -------------------
log "hyperfine: cc-teardown pretty on the extracted cli.js and on the $V_MONO binary"
"${HF[@]}" --warmup 3 --min-runs 10 --export-json "$RES/ours.json" \
    -n "cc-teardown pretty cli.js" "$BIN pretty $CLI -o $OUT_OURS --quiet" \
    -n "cc-teardown pretty $T_MONO" "$BIN pretty $T_MONO -o $OUT_BIN --quiet"

# The code-split build: each run writes ~3,300 files into a new, empty folder
# (see the Foundation section on this VM's ext4 and freshly deleted files).
PDIR="$JS/p$V_SPLIT-out"   # a symlink to the current run's folder
PRUNS="$JS/p$V_SPLIT-runs"
rm -rf "$PRUNS" "$PDIR" && mkdir -p "$PRUNS"
log "hyperfine: cc-teardown pretty $T_SPLIT (every JavaScript module), each run into a new folder"
"${HF[@]}" --warmup 2 --min-runs 10 --export-json "$RES/split.json" \
    --prepare "bash -c 'ln -sfn \"\$(mktemp -d -p $PRUNS)\" $PDIR'" \
    -n "cc-teardown pretty $T_SPLIT -o DIR" "$BIN pretty $T_SPLIT -o $PDIR --quiet"

# Phase timings (decode, parse, index, print, wall) from --json.
log "phase timings: $SPLIT_RUNS runs of each with --json"
for i in $(seq "$SPLIT_RUNS"); do
    "$BIN" pretty "$CLI" -o "$OUT_OURS" --quiet --json >"$RES/phases-mono-$i.json"
    "$BIN" pretty "$T_SPLIT" -o "$(mktemp -d -p "$PRUNS")" --quiet --json >"$RES/phases-split-$i.json"
done

# Peak RSS (and one more wall time) from GNU time: "wall_s rss_kb user_s sys_s".
gtime() { # name, command...
    local name="$1"
    shift
    /usr/bin/time -o "$RES/$name.time" -f '%e %M %U %S' "$@"
}
log "peak RSS of ours (/usr/bin/time)"
gtime rss-ours "$BIN" pretty "$CLI" -o "$OUT_OURS" --quiet
gtime rss-ours-binary "$BIN" pretty "$T_MONO" -o "$OUT_BIN" --quiet
gtime rss-split "$BIN" pretty "$T_SPLIT" -o "$(mktemp -d -p "$PRUNS")" --quiet
split_files="$(find "$PDIR/" -name '*.js' -type f | wc -l)"
rm -rf "$PRUNS" "$PDIR"

# --- js-beautify: a few runs ---------------------------------------------------------
mark_load js-beautify
log "hyperfine: js-beautify $JSBEAUTIFY_VERSION (3 runs)"
"${HF[@]}" --runs 3 --export-json "$RES/jsbeautify.json" \
    -n "js-beautify cli.js" "${JSB_CMD[*]}"
gtime rss-jsbeautify "${JSB_CMD[@]}" >/dev/null

# --- prettier: one run, wall time and peak RSS together -------------------------------
if [ "${BENCH_JS_NO_PRETTIER:-0}" = 1 ]; then
    log "skipping prettier (BENCH_JS_NO_PRETTIER=1)"
else
    mark_load prettier
    log "prettier $PRETTIER_VERSION: one run (/usr/bin/time; ~1 min and ~4 GB)"
    gtime prettier "${PRETTIER_CMD[@]}" >"$OUT_PRETTIER"
fi

mark_load end

# --- every output is a real pretty-print, not a copy ----------------------------------
raw_lines="$(wc -l <"$CLI")"
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
for f in "$OUT_OURS" "$OUT_BIN" "$OUT_JSB" $([ -f "$RES/prettier.time" ] && echo "$OUT_PRETTIER"); do
    n="$(lines "$f")"
    [ "$n" -gt $((raw_lines * 5)) ] || die "$f has $n lines for $raw_lines raw lines: not pretty-printed?"
done
[ -s "$OUT_OURS.linemap.json" ] || die "no line map next to $OUT_OURS"
cmp -s "$OUT_OURS" "$OUT_BIN" || die "pretty of cli.js and of the $V_MONO binary differ"

# --- meta ---------------------------------------------------------------------------
python3 - "$RES/meta.json" <<EOF
import json, os, platform, subprocess, sys, datetime
def sh(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return None
def lines(p):
    try:
        with open(p, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return None
def size(p):
    return os.path.getsize(p) if os.path.exists(p) else None
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "cpu": cpu,
    "cores": os.cpu_count(),
    "kernel": platform.release(),
    "hyperfine": sh("hyperfine", "--version"),
    "node": sh("node", "--version"),
    "prettier": "$PRETTIER_VERSION",
    "js_beautify": "$JSBEAUTIFY_VERSION",
    "cc_teardown": sh("$BIN", "--version"),
    "git_rev": "$GIT_REV",
    "load_before": [float(x) for x in "$LOAD_BEFORE".split()],
    "load_after": [float(x) for x in open("/proc/loadavg").read().split()[:3]],
    "loads": [[l.split()[0], [float(x) for x in l.split()[1:4]]] for l in open("$LOADS")],
    "platform": "$PLATFORM",
    "mono": {"version": "$V_MONO", "target": "$T_MONO", "source": "$S_MONO",
             "cli_bytes": size("$CLI"), "cli_lines": lines("$CLI"), "cli_sha256": "$cli_sha"},
    "split": {"version": "$V_SPLIT", "target": "$T_SPLIT", "source": "$S_SPLIT",
              "files_written": int("$split_files")},
    "outputs": {
        "ours": {"bytes": size("$OUT_OURS"), "lines": lines("$OUT_OURS"),
                 "linemap_bytes": size("$OUT_OURS.linemap.json")},
        "js-beautify": {"bytes": size("$OUT_JSB"), "lines": lines("$OUT_JSB")},
        "prettier": {"bytes": size("$OUT_PRETTIER"), "lines": lines("$OUT_PRETTIER")}
                    if os.path.exists("$RES/prettier.time") else None,
    },
}, open(sys.argv[1], "w"), indent=2)
EOF

# --- table + checks -----------------------------------------------------------------
python3 "$BENCH/js_summarize.py" "$RES"
