#!/usr/bin/env python3
"""The analysis pipeline and its facts store (issue: one analysis per build).

Runs each analysis command on 2.1.332 darwin-arm64 cold (empty facts store)
and warm (store filled by the previous run), interleaved so that cold and
warm runs see the same machine, N times each, and prints medians with their
spread, peak RSS and CPU use (user+sys over wall), then the checks:

  cold  ≤ 2.5 s wall, user+sys > 1.5 × wall, peak ≤ 1 GB
  warm  ≤ 100 ms, output byte-identical to the cold run
  diff 2.1.260 vs 2.1.332 with both stored: fact sections ≤ 1 s, full ≤ 5 s

With --before PATH, each cold run is paired with a cold run of that binary
(an earlier build of cc-teardown, e.g. main's), and the table gives its
median and the ratio. --no-diff skips the diff part, --diff-only the rest.

The diff part fills a store per binary first (facts of both builds, then one
full diff: code facts are stored the first time a diff needs them), then
times the fact sections and the full diff; with --before, each of this
binary's runs is paired with one of the earlier binary, in alternating
order, and the full diffs' JSON (timings aside) must be equal.

Usage: bench/pipeline.py [--runs N] [--bin PATH] [--before PATH] [--no-diff | --diff-only]
       (builds release unless --bin)
Exit status 0 when every check passes, 1 when one fails, 2 on error.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--bin")
ap.add_argument("--before")
ap.add_argument("--no-diff", action="store_true")
ap.add_argument("--diff-only", action="store_true")
args = ap.parse_args()

if args.bin:
    BIN = args.bin
else:
    subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT, check=True)
    BIN = os.path.join(ROOT, "target/release/cc-teardown")


def fetch(v, p):
    return subprocess.run([BIN, "fetch", v, "--platform", p, "--quiet"], check=True,
                          capture_output=True, text=True).stdout.strip()


def timed(cmd):
    """(wall s, user+sys s, peak RSS MB, stdout) of one run."""
    with tempfile.NamedTemporaryFile() as tf:
        out = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%e %U %S %M"] + cmd,
                             capture_output=True)
        if out.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}: {out.stderr.decode()[-500:]}")
        e, u, s, m = open(tf.name).read().split()[-4:]
    return float(e), float(u) + float(s), int(m) / 1024, out.stdout


def med(xs):
    return statistics.median(xs), min(xs), max(xs)


B332 = fetch("2.1.332", "darwin-arm64")
B260 = fetch("2.1.260", "darwin-arm64")
print(f"load before: {open('/proc/loadavg').read().split()[:3]}")
checks = []
rows = []
befores = []
for cmd in ([] if args.diff_only else ["workflows", "flags", "gates", "locate"]):
    cold, warm, before = [], [], []
    for _ in range(args.runs):
        store = tempfile.mkdtemp(prefix="cct-bench-")
        base = [BIN, cmd, B332, "--json", "--quiet", "--cache-dir", store]
        c = timed(base)
        w = timed(base)
        shutil.rmtree(store)
        cold.append(c)
        warm.append(w)
        if c[3] != w[3]:
            checks.append((f"{cmd}: warm output identical to cold", False))
        if args.before:
            store = tempfile.mkdtemp(prefix="cct-bench-")
            b = timed([args.before, cmd, B332, "--json", "--quiet", "--cache-dir", store])
            shutil.rmtree(store)
            before.append(b)
            if b[3] != c[3]:
                checks.append((f"{cmd}: output identical to --before's", False))
    if before:
        bw, bc, bm = med([x[0] for x in before]), med([x[1] for x in before]), med([x[2] for x in before])
        befores.append((cmd, bw, bc, bm, med([x[0] for x in cold]), med([x[1] for x in cold])))
    cw, cc, cm = med([x[0] for x in cold]), med([x[1] for x in cold]), med([x[2] for x in cold])
    ww, wm = med([x[0] for x in warm]), med([x[2] for x in warm])
    rows.append((cmd, cw, cc[0] / cw[0], cm, ww, wm))
    checks.append((f"{cmd} cold ≤ 2.5 s (median {cw[0]:.2f} s)", cw[0] <= 2.5))
    checks.append((f"{cmd} cold uses both cores (cpu/wall {cc[0] / cw[0]:.2f} > 1.5)", cc[0] / cw[0] > 1.5))
    checks.append((f"{cmd} cold peak ≤ 1 GB ({cm[0]:.0f} MB)", cm[0] <= 1024))
    checks.append((f"{cmd} warm ≤ 100 ms ({ww[0] * 1000:.0f} ms)", ww[0] <= 0.1))

print(f"\n2.1.332 darwin-arm64, {args.runs} paired runs, median [min–max]")
print(f"{'command':<10} {'cold wall':>20} {'cpu/wall':>9} {'cold peak':>10} {'warm wall':>22} {'warm peak':>10} {'cold/warm':>10}")
for cmd, cw, ratio, cm, ww, wm in rows:
    print(f"{cmd:<10} {cw[0]:>6.2f} s [{cw[1]:.2f}–{cw[2]:.2f}] {ratio:>9.2f} {cm[0]:>7.0f} MB "
          f"{ww[0] * 1000:>7.0f} ms [{ww[1] * 1000:.0f}–{ww[2] * 1000:.0f}] {wm[0]:>7.0f} MB {cw[0] / ww[0]:>9.0f}x")

if befores:
    print(f"\ncold, paired with --before {args.before}: median wall [min–max], cpu = user+sys")
    print(f"{'command':<10} {'before wall':>20} {'before cpu':>11} {'before peak':>12} {'wall':>20} {'cpu':>8} {'before/this':>12}")
    for cmd, bw, bc, bm, cw, cc in befores:
        print(f"{cmd:<10} {bw[0]:>6.2f} s [{bw[1]:.2f}–{bw[2]:.2f}] {bc[0]:>9.2f} s {bm[0]:>9.0f} MB "
              f"{cw[0]:>6.2f} s [{cw[1]:.2f}–{cw[2]:.2f}] {cc[0]:>6.2f} s {bw[0] / cw[0]:>11.2f}x")

if args.no_diff:
    print()
    for label, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")
    sys.exit(0 if all(ok for _, ok in checks) else 1)

# diff with both builds in the store (filled once per binary, outside the timing).
def fill(binary):
    store = tempfile.mkdtemp(prefix="cct-bench-")
    for b in (B260, B332):
        timed([binary, "flags", b, "--json", "--quiet", "--cache-dir", store])
    timed([binary, "diff", B260, B332, "--json", "--quiet", "--cache-dir", store])
    return store


def report(out):
    d = json.loads(out)
    d.pop("timings_ms", None)
    return d


sides = [("this", BIN)] + ([("before", args.before)] if args.before else [])
stores = {who: fill(binary) for who, binary in sides}
fo = {who: [] for who, _ in sides}
fu = {who: [] for who, _ in sides}
for run in range(args.runs):
    order = sides if run % 2 == 0 else sides[::-1]
    for who, binary in order:
        base = [binary, "diff", B260, B332, "--json", "--quiet", "--cache-dir", stores[who]]
        fo[who].append(timed(base + ["--only", "workflows,flags,gates,roles"]))
        fu[who].append(timed(base))
for who, _ in sides:
    shutil.rmtree(stores[who])
if args.before and report(fu["this"][0][3]) != report(fu["before"][0][3]):
    checks.append(("diff: full output identical to --before's", False))
print(f"\ndiff 2.1.260 vs 2.1.332, both stored, {args.runs} runs, median [min–max]; load {open('/proc/loadavg').read().split()[:3]}")
for who, _ in sides:
    fow, fuw = med([x[0] for x in fo[who]]), med([x[0] for x in fu[who]])
    fuc, fum = med([x[1] for x in fu[who]]), med([x[2] for x in fu[who]])
    print(f"{who:<7} fact sections {fow[0]:.2f} s [{fow[1]:.2f}–{fow[2]:.2f}], "
          f"full {fuw[0]:.2f} s [{fuw[1]:.2f}–{fuw[2]:.2f}] wall, {fuc[0]:.2f} s [{fuc[1]:.2f}–{fuc[2]:.2f}] cpu, "
          f"peak {fum[0]:.0f} MB [{fum[1]:.0f}–{fum[2]:.0f}]")
    if who == "this":
        checks.append((f"diff fact sections ≤ 1 s ({fow[0]:.2f} s)", fow[0] <= 1.0))
        checks.append((f"diff full ≤ 5 s ({fuw[0]:.2f} s)", fuw[0] <= 5.0))
        checks.append((f"diff full peak ≤ 1 GB ({fum[0]:.0f} MB)", fum[0] <= 1024))

print()
for label, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}  {label}")
sys.exit(0 if all(ok for _, ok in checks) else 1)
