#!/usr/bin/env bash
# Analysis benchmarks: `workflows`, and `flags` + `gates`, on the 2.1.220
# darwin-arm64 binary (targets: ≤ 3 s wall each on 2 cores), side by side
# with a baseline that just parses and indexes (`symbols`), so the
# ratio shows what the analyses add on top of the shared index.
#
#   bench/analysis.sh     build release, fetch the build, run, print a table
#
# Results: $BENCH_WORK/results-analysis/*.json (BENCH_WORK defaults to
# bench/.work, git-ignored). Exit status: 0 when every check passes, 1 when
# one fails, 2 on error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${BENCH_WORK:-$ROOT/bench/.work}"
RES="$WORK/results-analysis"
mkdir -p "$RES"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; } || exit 2
(cd "$ROOT" && cargo build --release -q) || exit 2
BIN="$WORK/cc-teardown-analysis"
cp "$ROOT/target/release/cc-teardown" "$BIN"
F220=$("$BIN" fetch 2.1.220 --platform darwin-arm64 --quiet) || exit 2
CFG="$WORK/claude-config.json"
echo '{"cachedGrowthBookFeatures": {"tengu_workflows_enabled": true, "tengu_review_workflow_routing": false}}' > "$CFG"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 1 --runs 5 --export-json "$RES/analysis.json" \
  -n "symbols (index only)" "$BIN symbols $F220 --grep ^initBundledWorkflows\$" \
  -n "workflows" "$BIN workflows $F220" \
  -n "flags" "$BIN flags $F220 --config $CFG" \
  -n "gates" "$BIN gates $F220 --config $CFG" \
  -n "flags + gates" "$BIN gates $F220 --flags --config $CFG" \
  -n "report" "$BIN report $F220 --config $CFG -o $WORK/report.md --quiet"
python3 - "$RES/analysis.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["symbols (index only)"]["mean"]
print(f"{'command':<22} {'mean':>8} {'vs index only':>14}")
for name, x in r.items():
    print(f"{name:<22} {x['mean']:>7.2f}s {x['mean']/base:>13.2f}x")
checks = [("workflows ≤ 3 s", r["workflows"]["mean"] <= 3.0), ("flags + gates ≤ 3 s", r["flags + gates"]["mean"] <= 3.0), ("report ≤ 5 s", r["report"]["mean"] <= 5.0)]
for label, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}  {label}")
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
