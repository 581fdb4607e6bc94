#!/usr/bin/env python3
"""Turn bench/run.sh's results (hyperfine JSON, rss.json, meta.json) into a
Markdown table with ratios and PASS/FAIL against the foundation targets.

Usage: summarize.py RESULTS_DIR   (writes RESULTS_DIR/summary.md, prints it)
Exit status: 0 when every check passes, 1 otherwise.
"""
import json
import os
import sys

# Targets (issue: read any build).
INFO_MAX_S = 0.050          # info on the 256 MB build, warm page cache
INFO_MIN_SPEEDUP = 10.0     # vs the read-the-whole-file baseline, same run
EXTRACT_MAX_S = 1.0         # extract of the ~1,830-module code-split build
PARTIAL_MAX_FRACTION = 0.25  # info/ls/verify: peak RSS below 1/4 of the file
WHOLE_MIN_FRACTION = 0.90   # control: hash reads it all, so RSS ~ file size


def load(res, name):
    with open(os.path.join(res, name)) as f:
        return json.load(f)


def ms(x):
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.3f} s"


def mib(kb):
    return f"{kb / 1024:.1f} MiB"


def main():
    res = sys.argv[1]
    meta = load(res, "meta.json")
    rss = load(res, "rss.json")
    runs = {}
    for f in ["info_vs_baseline.json", "ls.json", "verify.json", "hash.json", "extract.json",
              "extract_reused.json"]:
        for r in load(res, f)["results"]:
            runs[r["command"]] = r
    info = runs["cc-teardown info"]
    base = runs["baseline (read whole file)"]
    mono, split = meta["mono"], meta["split"]
    file_kb = mono["bytes"] / 1024

    checks = []  # (what, measured, target, ok)
    checks.append((
        f"`info` {mono['version']} mean wall time",
        ms(info["mean"]), f"≤ {ms(INFO_MAX_S)}", info["mean"] <= INFO_MAX_S))
    speedup = base["mean"] / info["mean"]
    checks.append((
        "`info` vs read-whole-file baseline (baseline/ours)",
        f"{speedup:.1f}×", f"≥ {INFO_MIN_SPEEDUP:.0f}×", speedup >= INFO_MIN_SPEEDUP))
    ext = runs["cc-teardown extract"]
    checks.append((
        f"`extract` {split['version']} ({split['modules']} modules) into a new folder, mean wall time",
        ms(ext["mean"]), f"≤ {ms(EXTRACT_MAX_S)}", ext["mean"] <= EXTRACT_MAX_S))
    for cmd in ["info", "ls", "verify"]:
        frac = rss[cmd] / file_kb
        checks.append((
            f"`{cmd}` peak RSS vs file ({mib(file_kb)}): never reads the whole file",
            f"{mib(rss[cmd])} ({frac:.0%})", f"< {PARTIAL_MAX_FRACTION:.0%}",
            frac < PARTIAL_MAX_FRACTION))
    frac = rss["hash"] / file_kb
    checks.append((
        "control: `hash` (reads everything) peak RSS vs file, so RSS does see touched pages",
        f"{mib(rss['hash'])} ({frac:.0%})", f"≥ {WHOLE_MIN_FRACTION:.0%}",
        frac >= WHOLE_MIN_FRACTION))

    rows = [
        ("cc-teardown info", mono, "info"),
        ("baseline (read whole file)", mono, "baseline"),
        ("cc-teardown ls", mono, "ls"),
        ("cc-teardown verify", mono, "verify"),
        ("cc-teardown hash", mono, "hash"),
        ("cc-teardown extract", split, "extract"),
        ("cc-teardown extract (output deleted just before)", split, None),
    ]
    out = []
    out.append(f"Machine: {meta['cpu']}, {meta['cores']} cores, Linux {meta['kernel']}; "
               f"{meta['date']}; {meta['cc_teardown']} ({meta['git_rev']}); "
               f"{meta['hyperfine']}; Python {meta['python']}; load average "
               f"{meta['load_before']} before, {meta['load_after']} after.")
    if meta["load_before"][0] > 1.0:
        out.append("")
        out.append("**Warning: the machine was busy (1-minute load average above 1 on "
                   f"{meta['cores']} cores); these figures are pessimistic.**")
    out.append("")
    out.append(f"Builds ({meta['platform']}): {mono['version']} = {mono['bytes']:,} bytes "
               f"(via {mono['source']}); {split['version']} = {split['bytes']:,} bytes, "
               f"{split['modules']} modules (via {split['source']}). "
               f"Bundle SHA-256 of {mono['version']}, identical from cc-teardown and the "
               f"baseline: `{mono['bundle_sha256']}`.")
    out.append("")
    out.append("| command | build | mean ± σ | median | min | runs | peak RSS | baseline/this |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, build, key in rows:
        r = runs[name]
        # The ratio only means something on the build the baseline read.
        ratio = f"{base['mean'] / r['mean']:.1f}×" if build is mono else "—"
        out.append(
            f"| {name} | {build['version']} | {ms(r['mean'])} ± {ms(r['stddev'] or 0)} | "
            f"{ms(r['median'])} | {ms(r['min'])} | {len(r['times'])} | "
            f"{mib(rss[key]) if key else '—'} | "
            f"{ratio} |")
    out.append("")
    out.append("| check | measured | target | result |")
    out.append("| --- | ---: | ---: | :---: |")
    for what, got, target, ok in checks:
        out.append(f"| {what} | {got} | {target} | {'PASS' if ok else 'FAIL'} |")
    text = "\n".join(out) + "\n"
    with open(os.path.join(res, "summary.md"), "w") as f:
        f.write(text)
    print(text, end="")
    failed = [c for c in checks if not c[3]]
    print(f"\n{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
