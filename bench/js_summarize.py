#!/usr/bin/env python3
"""Turn bench/js.sh's results (hyperfine JSON, GNU time files, `pretty --json`
phase timings, meta.json) into Markdown tables with ratios and PASS/FAIL
against the JavaScript-layer targets.

Usage: js_summarize.py RESULTS_DIR   (writes RESULTS_DIR/summary.md, prints it)
Exit status: 0 when every check passes, 1 otherwise.
"""
import glob
import json
import os
import statistics
import sys

# Targets (issue: parse, pretty-print and index).
MONO_MAX_S = 1.5             # parse + print + line map of the 21.6 MB entry module
MONO_MAX_RSS_KB = 1e9 / 1024  # 1 GB (10^9 bytes) peak RSS
PRETTIER_MIN_SPEEDUP = 50.0  # prettier / ours, same file, same run
JSB_MIN_SPEEDUP = 5.0        # js-beautify / ours
SPLIT_MAX_S = 2.0            # every JavaScript module of the code-split build
SPLIT_MIN_CORES = 1.0        # (user + system) / wall: more than one core busy

PHASES = ["decode", "parse", "index", "print", "wall"]


def load(res, name):
    with open(os.path.join(res, name)) as f:
        return json.load(f)


def gtime(res, name):
    """GNU time file "wall_s rss_kb user_s sys_s" -> dict, or None."""
    p = os.path.join(res, name + ".time")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        last = [l for l in f.read().splitlines() if l.strip()][-1]
    wall, rss, user, sys_ = last.split()
    return {"wall": float(wall), "rss": int(rss), "user": float(user), "sys": float(sys_)}


def ms(x):
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def mib(kb):
    return f"{kb / 1024:,.0f} MiB"


def secs(d):
    return d["secs"] + d["nanos"] / 1e9


def phases(res, kind):
    """Median per phase over the --json runs, plus the module count."""
    runs = [load(res, os.path.basename(p))
            for p in sorted(glob.glob(os.path.join(res, f"phases-{kind}-*.json")))]
    med = {ph: statistics.median(secs(r["timings"][ph]) for r in runs) for ph in PHASES}
    return med, len(runs[0]["modules"]), len(runs)


def main():
    res = sys.argv[1]
    meta = load(res, "meta.json")
    runs = {}
    for f in ["ours.json", "split.json", "jsbeautify.json"]:
        for r in load(res, f)["results"]:
            runs[r["command"]] = r
    mono, split = meta["mono"], meta["split"]
    ours = runs["cc-teardown pretty cli.js"]
    ours_bin = runs[f"cc-teardown pretty {mono['target']}"]
    sp = runs[f"cc-teardown pretty {split['target']} -o DIR"]
    jsb = runs["js-beautify cli.js"]
    rss_ours, rss_bin = gtime(res, "rss-ours"), gtime(res, "rss-ours-binary")
    rss_split, rss_jsb = gtime(res, "rss-split"), gtime(res, "rss-jsbeautify")
    prettier = gtime(res, "prettier")
    mono_ph, _, n_mono = phases(res, "mono")
    split_ph, split_modules, n_split = phases(res, "split")

    checks = []  # (what, measured, target, ok)
    checks.append((
        f"`pretty` cli.js ({mono['version']} entry, {mono['cli_bytes'] / 1e6:.1f} MB): "
        "parse + print + line map, mean wall",
        ms(ours["mean"]), f"≤ {ms(MONO_MAX_S)}", ours["mean"] <= MONO_MAX_S))
    checks.append((
        "`pretty` cli.js peak RSS",
        mib(rss_ours["rss"]), f"≤ 1 GB ({mib(MONO_MAX_RSS_KB)})",
        rss_ours["rss"] <= MONO_MAX_RSS_KB))
    if prettier:
        r = prettier["wall"] / ours["mean"]
        checks.append(("prettier / ours (wall, same file)", f"{r:.1f}×",
                       f"≥ {PRETTIER_MIN_SPEEDUP:.0f}×", r >= PRETTIER_MIN_SPEEDUP))
    else:
        checks.append(("prettier / ours (wall, same file)", "not run",
                       f"≥ {PRETTIER_MIN_SPEEDUP:.0f}×", False))
    r = jsb["mean"] / ours["mean"]
    checks.append(("js-beautify / ours (wall, same file)", f"{r:.1f}×",
                   f"≥ {JSB_MIN_SPEEDUP:.0f}×", r >= JSB_MIN_SPEEDUP))
    checks.append((
        f"`pretty` {split['version']} ({split_modules} JS modules) into a new folder, mean wall",
        ms(sp["mean"]), f"≤ {ms(SPLIT_MAX_S)}", sp["mean"] <= SPLIT_MAX_S))
    cores = (sp["user"] + sp["system"]) / sp["mean"]
    checks.append((
        f"`pretty` {split['version']} uses both cores: (user + system) / wall",
        f"{cores:.2f} cores", f"> {SPLIT_MIN_CORES:.1f}", cores > SPLIT_MIN_CORES))

    out = []
    out.append(f"Machine: {meta['cpu']}, {meta['cores']} cores, Linux {meta['kernel']}; "
               f"{meta['date']}; {meta['cc_teardown']} ({meta['git_rev']}); "
               f"{meta['hyperfine']}; node {meta['node']}, prettier {meta['prettier']}, "
               f"js-beautify {meta['js_beautify']}; load average "
               f"{meta['load_before']} before, {meta['load_after']} after.")
    if meta.get("loads"):
        out.append("")
        out.append("Load average (1 / 5 / 15 min) before each group and at the end: " + "; ".join(
            f"{label} {' / '.join(f'{x:.2f}' for x in l)}" for label, l in meta["loads"]) + ".")
    if max(l[0] for _, l in meta.get("loads", [["", meta["load_before"]]])) > 1.0:
        out.append("")
        out.append("**Warning: the machine was busy (1-minute load average above 1 at one of those points, on "
                   f"{meta['cores']} cores); these figures are pessimistic.**")
    out.append("")
    o = meta["outputs"]
    out.append(f"Input: the extracted {mono['version']} {meta['platform']} entry module, "
               f"{mono['cli_bytes']:,} bytes, {mono['cli_lines']:,} lines "
               f"(SHA-256 `{mono['cli_sha256']}`; build via {mono['source']}). Outputs: "
               f"ours {o['ours']['bytes']:,} bytes / {o['ours']['lines']:,} lines "
               f"(+ {o['ours']['linemap_bytes']:,}-byte line map); js-beautify "
               f"{o['js-beautify']['bytes']:,} / {o['js-beautify']['lines']:,}"
               + (f"; prettier {o['prettier']['bytes']:,} / {o['prettier']['lines']:,}"
                  if o.get("prettier") else "") + ".")
    out.append("")
    out.append("| command | input | mean ± σ | min | runs | user | system | peak RSS | "
               "this/ours |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def row(name, inp, r, rss, ratio=True):
        rt = f"{r['mean'] / ours['mean']:.1f}×" if ratio else "—"
        out.append(
            f"| {name} | {inp} | {ms(r['mean'])} ± {ms(r['stddev'] or 0)} | {ms(r['min'])} | "
            f"{len(r['times'])} | {ms(r['user'])} | {ms(r['system'])} | "
            f"{mib(rss['rss']) if rss else '—'} | {rt} |")
    row("cc-teardown pretty cli.js -o out.js", "cli.js", ours, rss_ours)
    row(f"cc-teardown pretty {mono['target']} -o out.js", "binary (reference)", ours_bin, rss_bin)
    row(f"js-beautify {meta['js_beautify']} -o out.js", "cli.js", jsb, rss_jsb)
    if prettier:
        out.append(
            f"| prettier {meta['prettier']} > out.js | cli.js | {ms(prettier['wall'])} (one run) | — | "
            f"1 | {ms(prettier['user'])} | {ms(prettier['sys'])} | {mib(prettier['rss'])} | "
            f"{prettier['wall'] / ours['mean']:.1f}× |")
    row(f"cc-teardown pretty {split['target']} -o DIR", f"{split['version']}, all "
        f"{split_modules} JS modules", sp, rss_split, ratio=False)
    out.append("")
    out.append(f"Phases (`pretty --json` timings, median of {n_mono} / {n_split} runs; "
               "`wall` covers decode to print, not reading the file, writing the "
               "outputs or exit; for the code-split build the phases are summed over "
               "modules, so they exceed its wall time):")
    out.append("")
    out.append("| build | decode | parse | index | print | wall (phases) | parse share of wall |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, ph in [(f"{mono['version']} cli.js", mono_ph),
                      (f"{split['version']}, {split_modules} modules", split_ph)]:
        share = ph["parse"] / ph["wall"]
        out.append(f"| {label} | {ms(ph['decode'])} | {ms(ph['parse'])} | {ms(ph['index'])} | "
                   f"{ms(ph['print'])} | {ms(ph['wall'])} | {share:.0%} |")
    s = split_ph
    cpu = s["decode"] + s["parse"] + s["index"] + s["print"]
    out.append("")
    out.append(f"Code-split: phase CPU time {ms(cpu)} over {ms(s['wall'])} of wall "
               f"({cpu / s['wall']:.2f} cores busy on average during the phases); "
               f"hyperfine's (user + system) / wall for the whole command: {cores:.2f}.")
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
