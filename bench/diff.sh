#!/usr/bin/env bash
# `diff` benchmark: the full 2.1.220 vs 2.1.260 (darwin-arm64) comparison
# (targets: ≤ 15 s wall on 2 cores, ≤ 3 GB peak RSS), side by side with
# what users did before: pretty-print both builds and run `diff -u` on the
# text (every identifier renamed, so nearly every line differs).
#
#   bench/diff.sh     build release, fetch both builds, run, print a table
#
# Results: $BENCH_WORK/results-diff/*.json (BENCH_WORK defaults to
# bench/.work, git-ignored). Exit status: 0 when every check passes, 1 when
# one fails, 2 on error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${BENCH_WORK:-$ROOT/bench/.work}"
RES="$WORK/results-diff"
mkdir -p "$RES"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; } || exit 2
(cd "$ROOT" && cargo build --release -q) || exit 2
BIN="$WORK/cc-teardown-diff"
cp "$ROOT/target/release/cc-teardown" "$BIN"
A=$("$BIN" fetch 2.1.220 --platform darwin-arm64 --quiet) || exit 2
B=$("$BIN" fetch 2.1.260 --platform darwin-arm64 --quiet) || exit 2
PEER="$WORK/diff-peer.sh"
cat > "$PEER" <<SH
#!/usr/bin/env bash
rm -rf "$WORK/peer" && mkdir -p "$WORK/peer/b"
"$BIN" pretty "$A" -o "$WORK/peer/a.js" --quiet
"$BIN" pretty "$B" -o "$WORK/peer/b" --quiet
find "$WORK/peer/b" -name '*.js' | sort | xargs cat > "$WORK/peer/b.js"
diff -u "$WORK/peer/a.js" "$WORK/peer/b.js" > "$WORK/peer/text.diff" || true
SH
chmod +x "$PEER"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 1 --runs 3 --export-json "$RES/diff.json" \
  -n "cc-teardown diff (all sections)" "$BIN diff $A $B --json -o $WORK/diff.json --quiet" \
  -n "cc-teardown diff --only workflows,flags,gates,roles" "$BIN diff $A $B --only workflows,flags,gates,roles --json -o $WORK/diff-facts.json --quiet" \
  -n "peer: pretty both + diff -u" "$PEER"
/usr/bin/time -v "$BIN" diff "$A" "$B" --json -o "$WORK/diff.json" --quiet 2> "$RES/time.txt"
RSS_KB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$RES/time.txt")
echo "peer's text diff: $(wc -l < "$WORK/peer/text.diff") lines"
python3 - "$RES/diff.json" "$RSS_KB" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
rss_gb = int(sys.argv[2]) / 1024 / 1024
ours = r["cc-teardown diff (all sections)"]["mean"]
peer = r["peer: pretty both + diff -u"]["mean"]
print(f"{'command':<52} {'mean':>8}")
for name, x in r.items():
    print(f"{name:<52} {x['mean']:>7.2f}s")
print(f"peer / ours: {peer / ours:.2f}x;  peak RSS of the full diff: {rss_gb:.2f} GB")
checks = [("full diff ≤ 15 s", ours <= 15.0), ("peak RSS ≤ 3 GB", rss_gb <= 3.0)]
for label, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}  {label}")
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
