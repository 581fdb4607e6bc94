#!/usr/bin/env python3
"""History: scan cost per build and query speed (issue: history).

1. Cold scan of one build: `history scan V --platform P` into an empty
   cache and an empty store (download, integrity check, analysis, record,
   delete), paired in the same loop with `fetch V` alone into an empty cache
   (the download floor), so the ratio says what the analysis adds.
2. Rescan of a known build (the store already holds it): must be instant.
3. Queries against a store (default: the one `history scan all` filled,
   given with --store) with hyperfine: show workflow / flag, changes,
   search, list, timeline.

Checks: cold scan ≤ 10 s, rescan ≤ 50 ms, each query ≤ 50 ms (medians).

Usage: bench/history.py [--runs N] [--bin PATH] [--store FILE] [--no-cold]
                        [--versions 2.1.260,2.1.332] [--platform P] [--rescan]
                        [--compare OLD_BIN [--compare-store FILE]]
       (builds release unless --bin; without --store the queries run on
        the small store the cold scans filled)
Exit status 0 when every check passes, 1 when one fails, 2 on error.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--bin")
ap.add_argument("--store")
ap.add_argument("--versions", default="2.1.260,2.1.332")
ap.add_argument("--platform", default="darwin-arm64")
ap.add_argument("--no-cold", action="store_true", help="skip the cold scans (queries only; needs --store)")
ap.add_argument("--compare", help="another binary whose queries run beside this one's (before/after)")
ap.add_argument("--compare-store", help="the store the --compare binary queries (default: --store); "
                "`changes` needs facts of each binary's analysis version")
ap.add_argument("--rescan", action="store_true", help="with --store: also rescan the whole store (asks the registry)")
args = ap.parse_args()

if args.bin:
    BIN = args.bin
else:
    subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT, check=True)
    BIN = os.path.join(ROOT, "target/release/cc-teardown")
# A copy, so that a build started elsewhere cannot swap the binary mid-run.
work = tempfile.mkdtemp(prefix="cct-bench-history-")
shutil.copy(BIN, os.path.join(work, "cc-teardown"))
BIN = os.path.join(work, "cc-teardown")


def timed(cmd, env=None):
    """(wall s, user+sys s, peak RSS MB) of one run."""
    tf = os.path.join(work, "time.txt")
    out = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd,
                         capture_output=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}: {out.stderr.decode()[-500:]}")
    e, u, s, m = open(tf).read().split()[-4:]
    return float(e), float(u) + float(s), int(m) / 1024


def med(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt(xs, unit="s"):
    m, lo, hi = med(xs)
    if unit == "ms":
        return f"{m * 1000:.0f} ms [{lo * 1000:.0f}–{hi * 1000:.0f}]"
    return f"{m:.2f} s [{lo:.2f}–{hi:.2f}]"


load = open("/proc/loadavg").read().split()[:3]
print(f"load before: {load}")
checks = []
small_store = os.path.join(work, "small.sqlite")
print(f"\n## Cold scan of one build ({args.platform}), {args.runs} paired runs\n")
print("| build | `history scan V` (download + analysis) | CPU | peak | `fetch V` alone | scan / fetch |")
print("|---|---|---|---|---|---|")
for v in ([] if args.no_cold else args.versions.split(",")):
    scans, cpus, peaks, fetches = [], [], [], []
    for i in range(args.runs):
        cache = tempfile.mkdtemp(prefix="cct-cache-", dir=work)
        store = os.path.join(work, f"s{i}.sqlite")
        w, c, p = timed([BIN, "history", "scan", v, "--platform", args.platform, "--quiet",
                         "--cache-dir", cache, "--store", store])
        scans.append(w); cpus.append(c); peaks.append(p)
        shutil.rmtree(cache)
        if i == 0:
            shutil.copy(store, small_store) if not os.path.exists(small_store) else None
        os.remove(store)
        cache = tempfile.mkdtemp(prefix="cct-cache-", dir=work)
        w, _, _ = timed([BIN, "fetch", v, "--platform", args.platform, "--quiet",
                         "--cache-dir", cache])
        fetches.append(w)
        shutil.rmtree(cache)
    ratio = statistics.median(scans) / statistics.median(fetches)
    print(f"| {v} | {fmt(scans)} | {statistics.median(cpus):.2f} s | {max(peaks):,.0f} MB "
          f"| {fmt(fetches)} | {ratio:.2f}× |")
    checks.append((f"cold scan of {v} ≤ 10 s (median)", statistics.median(scans) <= 10.0))

store = args.store or small_store
v0 = args.versions.split(",")[0]
rescan = []
# The rescan needs the version in the store it queries.
for _ in range(max(args.runs, 5)):
    w, _, _ = timed([BIN, "history", "scan", v0, "--platform", args.platform, "--quiet",
                     "--store", store, "--json"])
    rescan.append(w)
print(f"\nrescan of a known build ({v0}): {fmt(rescan, 'ms')}")
checks.append(("rescan of a known build ≤ 50 ms", statistics.median(rescan) <= 0.05))
if args.store and args.rescan:
    # Every release of the store again: one look at the registry's version
    # list, then nothing to do for each.
    allscan = []
    for _ in range(3):
        w, _, _ = timed([BIN, "history", "scan", "all", "--platform", args.platform, "--quiet",
                         "--store", store, "--json"])
        allscan.append(w)
    n = sum(1 for _ in json.loads(subprocess.run([BIN, "history", "list", "--json", "--store", store],
                                                 capture_output=True).stdout)["releases"])
    each = statistics.median(allscan) / max(n, 1)
    print(f"rescan of all {n} known releases: {fmt(allscan)} ({each * 1000:.1f} ms each)")
    checks.append(("rescan of known builds ≤ 50 ms each (scan all)", each <= 0.05))

queries = [
    ("list", ["history", "list", "--json"]),
    ("show workflow", ["history", "show", "workflow", "deep-research", "--json"]),
    ("show flag", ["history", "show", "flag", "tengu_review_workflow_routing", "--json"]),
    ("changes", ["history", "changes", v0, "--json"]),
    ("changes (code-split)", ["history", "changes", "2.1.242", "--json"]),
    ("search (flag name)", ["history", "search", "tengu_review_workflow_routing", "--json"]),
    ("search (a phrase in most prompts)", ["history", "search", "the user", "--json"]),
    ("search (2 characters)", ["history", "search", "gh", "--json"]),
    ("timeline (html)", ["history", "timeline", "--format", "html", "-o", os.path.join(work, "t.html")]),
    ("timeline (md)", ["history", "timeline", "--format", "md", "-o", os.path.join(work, "t.md")]),
]
sizes = sum(os.path.getsize(store + x) for x in ["", "-wal"] if os.path.exists(store + x))
print(f"\n## Queries on {store} ({sizes / 1e6:,.1f} MB)\n")
hf = shutil.which("hyperfine")
res = os.path.join(work, "q.json")
def quote(a):
    return a if a and all(c.isalnum() or c in "-_./=" for c in a) else "'" + a.replace("'", "'\\''") + "'"


if args.compare:
    other = os.path.join(work, "cc-teardown-compare")
    shutil.copy(args.compare, other)
if hf:
    # Each query of this binary, then the same of the --compare one.
    cmd = [hf, "-N", "--warmup", "3", "--runs", "20", "--export-json", res]
    for name, q in queries:
        cmd += ["-n", name, " ".join(quote(a) for a in [BIN] + q + ["--store", store])]
        if args.compare:
            cmd += ["-n", "before: " + name,
                    " ".join(quote(a) for a in [other] + q + ["--store", args.compare_store or store])]
    subprocess.run(cmd, check=True, capture_output=True)
    rows = {r["command"]: r for r in json.load(open(res))["results"]}
    print("| query | median | min–max | user+sys (mean) |" + (" before: median | min–max | user+sys (mean) |" if args.compare else ""))
    print("|---|---:|---|---:|" + ("---:|---|---:|" if args.compare else ""))
    for name, _ in queries:
        line = f"| {name} |"
        for key in [name] + (["before: " + name] if args.compare else []):
            r = rows[key]
            line += (f" {r['median'] * 1000:.1f} ms | {r['min'] * 1000:.1f}–{r['max'] * 1000:.1f} ms"
                     f" | {(r['user'] + r['system']) * 1000:.1f} ms |")
        print(line)
        checks.append((f"query `{name}` ≤ 50 ms", rows[name]["median"] <= 0.05))
else:
    for name, q in queries:
        ws = [timed([BIN] + q + ["--store", store])[0] for _ in range(10)]
        print(f"{name}: {fmt(ws, 'ms')}")
        checks.append((f"query `{name}` ≤ 50 ms", statistics.median(ws) <= 0.05))

print(f"\nload after: {open('/proc/loadavg').read().split()[:3]}")
for label, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}  {label}")
shutil.rmtree(work)
sys.exit(0 if all(ok for _, ok in checks) else 1)
