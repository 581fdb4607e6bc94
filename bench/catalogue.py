#!/usr/bin/env python3
"""How much of the community's prompt catalogue `surface` finds (issue 26).

The catalogue (Piebald-AI/claude-code-system-prompts) keeps one Markdown
file per model-facing text of Claude Code, under `system-prompts/`, named by
category: `agent-prompt-`, `data-`, `skill-`, `system-prompt-`,
`system-reminder-`, `tool-description-`, `tool-parameter-`. Each file is an
HTML-comment front matter (`<!--` … `-->`: name, ccVersion, variables) and
the text, where each interpolation is written `${NAME}` (or the expression).
Its git tags are versions (`v2.1.240`). This script reads it, never copies
it: its text is Claude Code's and is not ours to commit.

Measures (the rule of issue 26):

* recall: an item is *found* when one of our texts — `.prompts[].text`,
  `.tools[].description`, any `description` inside a tool's
  `input_schema`, or a schema description (`.schemas[].text`) — holds it
  after normalising both sides (below), or when at least 90 % of the
  item's word 6-grams occur in one text of ours. Overall and per
  category; and again in the model-facing texts only (all but
  `.schemas`: the catalogue also keeps the SDK protocol's field
  descriptions, which no model reads).
* kind agreement (over the model-facing match): for each found item,
  whether the kind of the text that
  holds it (a prompt's `kind`; `tool-description` for a tool's description,
  `tool-parameter` for a parameter's) is one of the kinds its category maps
  to (CATEGORY_KINDS).
* every miss, with the reason we miss it (causes below), read from the
  build's own string literals.
* precision: `--sample N --seed S` draws N of our `.prompts` for a verdict
  by hand; `--verdicts FILE` reads the verdicts and computes precision.

Normalisation (both sides, same function `normalise`):

1. every interpolation `${…}` — braces balanced, quotes and nested template
   literals inside it skipped — becomes the placeholder `${}`: the
   catalogue's named variables, our `${vN}` and our run-time marker `${…}`
   are then equal;
2. on the catalogue side only, the escapes `\\n`, `\\r`, `\\t` its
   extractor leaves in texts taken from quoted strings are read as the
   white space they stand for;
3. every run of white space (Unicode `\\s`) becomes one space; the text is
   stripped;
4. placeholders separated only by white space become one placeholder (the
   evaluator may merge adjacent run-time parts into one).

Matching, for one catalogue item I (normalised) against our texts T
(normalised), best first:

* `equal`:     I == T for some T;
* `contained`: I is a substring of some T (the catalogue cuts long prompts
  into pieces: a piece inside our whole prompt is found);
* `6-gram`:    I has at least 6 words (split on the single spaces) and at
  least 90 % of I's distinct word 6-grams (case-sensitive, punctuation
  kept, `${}` a word) are 6-grams of one T.

The matched text is the best one (equal, then contained, then highest
6-gram coverage); among equally good texts one whose kind agrees is taken.

Causes of a miss (the first that applies), from the build's literals
(modules written by `cc-teardown extract`, lexed here: strings and template
literals, cooked, a template's parts joined with `${…}` as the detector
sees them):

* `one-literal:RULE`: one literal holds the item (the matching rule against
  that literal's value), and the detector of src/analysis/surface/prompts.rs
  drops it by RULE: `no-sink` (the detector does not take the literal:
  its value reaches no place the detector knows sends to a model),
  `inside-prompt` (inside the `${…}` of a template that is a prompt: the
  outer prompt shows a variable there), `kept` (the detector keeps it: our
  text should hold it — look closer);
* `split`: no one literal holds it, but the literals together cover it
  (≥ 90 % of its 6-grams, or every static piece of a short item): the text
  is assembled from several literals (concatenation, array join, pieces
  chosen by conditions);
* `partial`: some of its 6-grams are in literals, less than 90 %: partly
  assembled at run time, or the catalogue's text is not this build's;
* `asset`: not in any literal, but in the bytes of a non-JavaScript module
  (an embedded file);
* `absent`: nowhere in the build's modules.

`near` (in the miss list, not a cause) is the best 6-gram coverage of the
item by one of our texts.

Usage:
  bench/catalogue.py --catalogue DIR --surface FILE [--modules DIR] [--json]
  bench/catalogue.py --version 2.1.240 --catalogue-git GITDIR
                     [--bin PATH] [--platform darwin-arm64] [--store FILE]
                     [--work DIR] [--json]
      (checks tag v2.1.240 out of the catalogue's git dir, runs
       `surface --json` and `extract` of npm:2.1.240/PLATFORM itself;
       CC_TEARDOWN_CACHE and CC_TEARDOWN_STORE are passed on)
  bench/catalogue.py --surface FILE --sample 100 --seed 26 [--verdicts FILE]
      (precision: the sample alone needs no catalogue)

A verdict file holds one line per prompt: `ID yes|no [REASON]` (white
space separated; `#` starts a comment). Precision = yes / (yes + no) over
the sampled ids; the reasons of the `no`s are counted.

Exit status 0, or 2 on bad input (one line on stderr).
"""
import argparse
import copy
import bisect
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict

# Deeply nested templates (a tool's pieces) recurse deeply when normalised.
sys.setrecursionlimit(20000)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Catalogue file-name prefixes, longest first so `system-prompt-` wins over
# a shorter prefix.
CATEGORIES = [
    "system-reminder",
    "tool-description",
    "tool-parameter",
    "system-prompt",
    "agent-prompt",
    "skill",
    "data",
]

# Which of our kinds count as agreeing with a catalogue category. `tool` is
# the kind prompts.rs gives a tool's prompt; the others are the kinds issue
# 26 asks for (most do not exist yet: the baseline says so).
CATEGORY_KINDS = {
    "agent-prompt": {"agent"},
    "system-prompt": {"system", "output-style"},
    "system-reminder": {"system-reminder"},
    "tool-description": {"tool-description"},
    "tool-parameter": {"tool-parameter"},
    "skill": {"skill"},
    "data": {"data"},
}

GRAM = 6
THRESHOLD = 0.9
PLACEHOLDER = "${}"


def die(msg):
    print(f"catalogue.py: {msg}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- normalise


def _interpolation_end(t, i, quotes):
    """Index just past the `}` closing the `${` at t[i], or -1. With
    `quotes`, braces inside quoted strings and template literals are
    skipped (a nested template's own `${…}` counted)."""
    depth = 0
    j = i + 2
    n = len(t)
    while j < n:
        c = t[j]
        if quotes and c in "\"'":
            k = j + 1
            while k < n and t[k] != c:
                k += 2 if t[k] == "\\" else 1
            if k >= n:
                return -1
            j = k + 1
            continue
        if quotes and c == "`":
            k = j + 1
            while k < n and t[k] != "`":
                if t[k] == "\\":
                    k += 2
                elif t.startswith("${", k):
                    e = _interpolation_end(t, k, quotes)
                    if e < 0:
                        return -1
                    k = e
                else:
                    k += 1
            if k >= n:
                return -1
            j = k + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return j + 1
            depth -= 1
        j += 1
    return -1


def strip_interpolations(t):
    """`t` with every `${…}` replaced by PLACEHOLDER."""
    out = []
    i = 0
    while True:
        k = t.find("${", i)
        if k < 0:
            out.append(t[i:])
            break
        out.append(t[i:k])
        # Quote-aware first; the catalogue's extractor unescapes quotes
        # inside expressions, which can unbalance them: then braces alone.
        e = _interpolation_end(t, k, True)
        if e < 0:
            e = _interpolation_end(t, k, False)
        if e < 0:
            out.append("${")
            i = k + 2
            continue
        out.append(PLACEHOLDER)
        i = e
    return "".join(out)


_WS = re.compile(r"\s+")
_RUNS = re.compile(r"\$\{\}(?: ?\$\{\})+")
_ESCAPES = re.compile(r"\\[nrt]")


def normalise(t, catalogue=False):
    t = strip_interpolations(t)
    if catalogue:
        t = _ESCAPES.sub(" ", t)
    t = _WS.sub(" ", t).strip()
    return _RUNS.sub(PLACEHOLDER, t)


def grams(norm):
    w = norm.split(" ")
    return {" ".join(w[i : i + GRAM]) for i in range(len(w) - GRAM + 1)}


# ---------------------------------------------------------------- catalogue


def category_of(fname):
    for c in CATEGORIES:
        if fname.startswith(c + "-"):
            return c
    return None


_FRONT = re.compile(r"<!--\n(.*?)\n-->", re.S)


def read_catalogue(root):
    d = os.path.join(root, "system-prompts")
    if not os.path.isdir(d):
        die(f"{root}: no system-prompts/ folder (not a checkout of the catalogue)")
    items = []
    for f in sorted(os.listdir(d)):
        if not f.endswith(".md"):
            continue
        cat = category_of(f)
        if cat is None:
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fh:
            content = fh.read()
        m = _FRONT.search(content)
        body = content[m.end() :] if m else content
        ver = None
        if m:
            mv = re.search(r'^ccVersion:\s*"?([^"\n]*)"?', m.group(1), re.M)
            ver = mv.group(1) if mv else None
        norm = normalise(body, catalogue=True)
        if not norm:
            continue
        items.append(
            {
                "file": f,
                "category": cat,
                "bytes": len(body.strip().encode()),
                "cc_version": ver,
                "norm": norm,
            }
        )
    if not items:
        die(f"{d}: no catalogue items")
    return items


# ---------------------------------------------------------------- surface


def schema_descriptions(node, out):
    """Every `description` string inside a JSON Schema (properties, items,
    anyOf … at any depth)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "description" and isinstance(v, str):
                out.append(v)
            else:
                schema_descriptions(v, out)
    elif isinstance(node, list):
        for v in node:
            schema_descriptions(v, out)


def our_texts(surface):
    """(source, id, kind, normalised text) of every text of ours."""
    texts = []
    for p in surface.get("prompts") or []:
        texts.append(("prompt", p["id"], p["kind"], normalise(p["text"])))
    for t in surface.get("tools") or []:
        if t.get("description"):
            texts.append(
                ("tool", t["name"], "tool-description", normalise(t["description"]))
            )
        descs = []
        schema = t.get("input_schema") or {}
        # The schema's own top-level description is the tool's, not a
        # parameter's.
        schema_descriptions(
            {k: v for k, v in schema.items() if k != "description"}, descs
        )
        for i, d in enumerate(descs):
            texts.append(
                ("parameter", f"{t['name']}#{i}", "tool-parameter", normalise(d))
            )
    for x in surface.get("schemas") or []:
        texts.append(("schema", x["id"], "schema", normalise(x["text"])))
    # A text that is all holes (a description chosen whole at run time,
    # `${v1 ? `A` : `B`}`) has no words to match: it would match anything.
    return [t for t in texts if t[3].replace(PLACEHOLDER, "").strip()]


class TextIndex:
    """Our texts, searchable by substring (one joined string) and by word
    6-gram (an inverted index)."""

    SEP = "\x00"

    def __init__(self, texts):
        self.texts = texts
        self.starts = []
        parts = []
        pos = 0
        for t in texts:
            self.starts.append(pos)
            parts.append(t[3])
            pos += len(t[3]) + 1
        self.joined = self.SEP.join(parts)
        self.by_gram = defaultdict(list)
        for i, t in enumerate(texts):
            for g in grams(t[3]):
                self.by_gram[g].append(i)

    def containing(self, norm):
        """Indices of the texts holding `norm`."""
        found = set()
        k = self.joined.find(norm)
        while k >= 0:
            found.add(bisect.bisect_right(self.starts, k) - 1)
            k = self.joined.find(norm, k + 1)
        return found

    def coverage(self, item_grams):
        """{text index: share of item_grams it has}."""
        if not item_grams:
            return {}
        c = Counter()
        for g in item_grams:
            for i in self.by_gram.get(g, ()):
                c[i] += 1
        return {i: n / len(item_grams) for i, n in c.items()}


def match(items, texts):
    idx = TextIndex(texts)
    for it in items:
        norm = it["norm"]
        ig = grams(norm)
        it["grams"] = ig
        cov = idx.coverage(ig)
        cands = []  # (rank, score, agrees, text index)
        ok_kinds = CATEGORY_KINDS[it["category"]]
        for i in idx.containing(norm):
            rank = 2 if texts[i][3] == norm else 1
            cands.append((rank, 1.0, texts[i][2] in ok_kinds, i))
        for i, s in cov.items():
            if s >= THRESHOLD:
                cands.append((0, s, texts[i][2] in ok_kinds, i))
        it["near"] = max(cov.values(), default=0.0)
        if not cands:
            it["rule"] = None
            continue
        rank, score, agrees, i = max(cands)
        it["rule"] = ["6-gram", "contained", "equal"][rank]
        it["score"] = score
        it["matched"] = {"source": texts[i][0], "id": texts[i][1], "kind": texts[i][2]}
        it["kind_agrees"] = agrees


# ---------------------------------------------------------------- literals


_STR = {
    '"': re.compile(r'"(?:[^"\\\n]|\\.)*"', re.S),
    "'": re.compile(r"'(?:[^'\\\n]|\\.)*'", re.S),
}
_QUASI = re.compile(r"(?:[^`\\$]|\\.|\$(?!\{))*", re.S)
_REGEX = re.compile(r"/(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[A-Za-z]*")
_TOP = re.compile(r"[\"'`/]")
_NESTED = re.compile(r"[\"'`/{}]")
_KEYWORDS_BEFORE_REGEX = {
    "return", "typeof", "case", "do", "else", "in", "of", "new", "delete",
    "void", "throw", "instanceof", "yield", "await",
}
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_ESC = re.compile(r"\\(u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|\r\n|.)", re.S)


def cook(raw):
    def one(m):
        e = m.group(1)
        if e in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
            return ""
        if e in _SIMPLE_ESC:
            return _SIMPLE_ESC[e]
        if e.startswith("u{"):
            return chr(min(int(e[2:-1], 16), 0x10FFFF))
        if e[0] in "ux" and len(e) > 1:
            return chr(int(e[1:], 16))
        return e

    out = _ESC.sub(one, raw)
    if "\\u" in raw:
        # `\uD83D\uDCA1` is one character written as a UTF-16 pair.
        out = out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return out


def _regex_allowed(src, i):
    """Whether a `/` at src[i] starts a regular expression (not a division),
    from the code before it."""
    j = i - 1
    while j >= 0 and src[j] in " \t\r\n":
        j -= 1
    if j < 0:
        return True
    c = src[j]
    if c in ")]":
        return False
    if c.isalnum() or c in "_$":
        k = j
        while k >= 0 and (src[k].isalnum() or src[k] in "_$"):
            k -= 1
        return src[k + 1 : j + 1] in _KEYWORDS_BEFORE_REGEX
    # `}` ends a block more often than an object before a `/`.
    return True


def lex(src):
    """Every string and template literal of `src`: (lo, hi, kind, value,
    parent), value cooked (a template's parts joined with `${…}`), parent
    the index of the template whose `${…}` holds it (or None)."""
    lits = []
    # Frames: ('code', depth, template index) inside a template's `${…}`.
    stack = []
    i = 0
    n = len(src)

    while i < n:
        pat = _NESTED if stack else _TOP
        m = pat.search(src, i)
        if not m:
            break
        j = m.start()
        c = src[j]
        if c in "\"'":
            mm = _STR[c].match(src, j)
            if not mm:
                i = j + 1
                continue
            parent = stack[-1][2] if stack else None
            lits.append([j, mm.end(), "string", cook(mm.group()[1:-1]), parent])
            i = mm.end()
        elif c == "/":
            if src.startswith("//", j):
                e = src.find("\n", j)
                i = n if e < 0 else e
            elif src.startswith("/*", j):
                e = src.find("*/", j + 2)
                i = n if e < 0 else e + 2
            elif _regex_allowed(src, j):
                mm = _REGEX.match(src, j)
                i = mm.end() if mm else j + 1
            else:
                i = j + 1
        elif c == "`":
            parent = stack[-1][2] if stack else None
            lits.append([j, None, "template", [], parent])
            i = _scan_quasi(src, j + 1, len(lits) - 1, lits, stack)
        elif c == "{":
            stack[-1][1] += 1
            i = j + 1
        elif c == "}":
            if stack[-1][1] > 0:
                stack[-1][1] -= 1
                i = j + 1
            else:
                t = stack.pop()[2]
                i = _scan_quasi(src, j + 1, t, lits, stack)
    out = []
    for lo, hi, kind, value, parent in lits:
        if kind == "template":
            if hi is None:
                hi = n
            value = "${…}".join(cook(q) for q in value)
        out.append((lo, hi, kind, value, parent))
    return out


def _scan_quasi(src, i, t, lits, stack):
    """Read a template's part from src[i]; at `${` push a code frame, at
    the closing backtick end the template. Returns where to go on."""
    m = _QUASI.match(src, i)
    e = m.end()
    lits[t][3].append(src[i:e].replace("\r\n", "\n"))
    if src.startswith("${", e):
        stack.append(["code", 0, t])
        return e + 2
    lits[t][1] = e + 1
    return e + 1


def _trim_non_letters(w):
    a, b = 0, len(w)
    while a < b and not w[a].isalpha():
        a += 1
    while b > a and not w[b - 1].isalpha():
        b -= 1
    return w[a:b]


def detector_rule(value, ours):
    """Why src/analysis/surface/prompts.rs does not take the literal
    `value` as a prompt (None: it does — `ours` holds our prompts' texts,
    normalised). The detector takes a literal by where its value goes, which
    this script cannot see: a literal it leaves is `no-sink` (its value
    reaches no place the detector knows sends to a model)."""
    return None if normalise(value) in ours else "no-sink"


_IDENT_TAIL = re.compile(r"[A-Za-z_$][\w$]*$")


def place(src, lo, hi):
    """Where a literal stands, from the code around it, as a structural
    category (no minified name): `property:KEY` (KEY is a property name,
    which minifiers keep), `return`, `argument`, `element`, `binding`,
    `ternary`, `fallback`, `concatenation`, `interpolated`, `other`."""
    before = src[max(0, lo - 80) : lo].rstrip()
    after = src[hi : hi + 8].lstrip()
    if after.startswith("+") or before.endswith("+"):
        return "concatenation"
    if before.endswith("${"):
        return "interpolated"
    if before.endswith("return") or before.endswith("=>"):
        return "return"
    if before.endswith(("??", "||", "&&")):
        return "fallback"
    if before.endswith("?"):
        return "ternary"
    if before.endswith(":"):
        head = before[:-1].rstrip()
        m = _IDENT_TAIL.search(head)
        if m and head[: m.start()].rstrip().endswith(("{", ",")):
            return "property:" + m.group()
        m = re.search(r"[\"']([^\"'\\]{1,40})[\"']$", head)
        if m:
            return "property:" + m.group(1)
        return "ternary"
    if before.endswith("("):
        return "argument"
    if before.endswith("["):
        return "element"
    if before.endswith(","):
        # An argument, an element or a property's neighbour: what closes
        # first after the literal says which.
        close = re.match(r"[^)\]}]*([)\]}])", src[hi : hi + 2000])
        return {")": "argument", "]": "element"}.get(close.group(1) if close else "", "other")
    if before.endswith("=") and not before.endswith(("==", "!=", "<=", ">=")):
        return "binding"
    return "other"


def read_modules(mod_dir):
    """[(module name, lexed literals or None, raw text)] of an `extract`
    output folder."""
    man_path = os.path.join(mod_dir, "manifest.json")
    try:
        with open(man_path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as e:
        die(f"{man_path}: {e}")
    mods = []
    for m in manifest.get("modules", []):
        path = os.path.join(mod_dir, m["file"])
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        # A latin1 module is stored (and written) one byte a character;
        # others are UTF-8 once extracted.
        enc = "latin-1" if m.get("encoding") == "latin1" else "utf-8"
        text = raw.decode(enc, "replace")
        # Only what the runtime loads as JavaScript is code; `file`
        # modules (bundled web assets) and native modules are bytes.
        is_js = m.get("loader") == "js"
        mods.append((m["file"], lex(text) if is_js else None, text))
    return mods


def attribute(misses, mods, prompts=()):
    """Set each miss's `cause` from the build's literals; returns a check
    of the lexer: how many of our prompts (`prompts`, normalised) equal a
    literal it read, which should be nearly all (those assembled from a
    tool's pieces are not one literal)."""
    # Literals, normalised, and the 6-grams the misses need.
    need = set()
    for it in misses:
        need |= it["grams"]
    ours = set(prompts)
    lits = []  # (module, norm, detector rule or None, inside-prompt)
    gram_lits = defaultdict(list)
    assets = []
    for name, lexed, raw in mods:
        if lexed is None:
            assets.append(_WS.sub(" ", raw))
            continue
        prompt_tpl = {
            k
            for k, (_, _, kind, value, _) in enumerate(lexed)
            if kind == "template" and detector_rule(value, ours) is None
        }
        for k, (lo, hi, kind, value, parent) in enumerate(lexed):
            norm = normalise(value)
            if len(norm) < 8:
                continue
            inside = False
            p = parent
            while p is not None:
                if p in prompt_tpl:
                    inside = True
                    break
                p = lexed[p][4]
            li = len(lits)
            lits.append((name, norm, detector_rule(value, ours), inside, place(raw, lo, hi), len(value)))
            for g in grams(norm):
                if g in need:
                    gram_lits[g].append(li)
    joined = TextIndex([("lit", i, "", l[1]) for i, l in enumerate(lits)])
    lit_norms = {l[1] for l in lits}
    check = {
        "modules": sum(1 for _, lexed, _ in mods if lexed is not None),
        "literals": len(lits),
        "prompts": len(prompts),
        "prompts_equal_to_a_literal": sum(1 for p in prompts if p in lit_norms),
    }
    for it in misses:
        ig = it["grams"]
        holders = set(joined.containing(it["norm"]))
        covered = 0
        per = Counter()
        for g in ig:
            ls = gram_lits.get(g)
            if ls:
                covered += 1
                for li in set(ls):
                    per[li] += 1
        if ig:
            holders |= {li for li, c in per.items() if c / len(ig) >= THRESHOLD}
            union = covered / len(ig)
        else:
            pieces = [p.strip() for p in it["norm"].split(PLACEHOLDER) if p.strip()]
            found = [p for p in pieces if joined.containing(p)]
            union = len(found) / len(pieces) if pieces else 0.0
        it["literal_coverage"] = round(union, 3)
        if holders:
            li = min(holders, key=lambda x: (lits[x][3], lits[x][2] is not None))
            name, _, rule, inside, where, size = lits[li]
            why = "inside-prompt" if inside else (rule or "kept")
            it["cause"] = f"one-literal:{why}"
            it["place"] = where
            it["literal_bytes"] = size
            it["modules"] = sorted({lits[x][0] for x in holders})
        elif union >= THRESHOLD:
            it["cause"] = "split"
        elif union > 0:
            it["cause"] = "partial"
        else:
            probe = max(
                (p.strip() for p in it["norm"].split(PLACEHOLDER)), key=len, default=""
            )
            if probe and any(probe in a for a in assets):
                it["cause"] = "asset"
            else:
                it["cause"] = "absent"
        if "modules" not in it:
            ms = {lits[li][0] for g in ig for li in gram_lits.get(g, ())}
            it["modules"] = sorted(ms)[:5]
    return check


# ---------------------------------------------------------------- precision


def sample(surface, n, seed):
    prompts = sorted(surface.get("prompts") or [], key=lambda p: p["id"])
    if n > len(prompts):
        die(f"--sample {n}: the surface has only {len(prompts)} prompts")
    return random.Random(seed).sample(prompts, n)


def read_verdicts(path):
    v = {}
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        die(f"{path}: {e}")
    for no, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) < 2 or parts[1] not in ("yes", "no"):
            die(f"{path}:{no}: want `ID yes|no [REASON]`")
        v[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return v


def precision(picked, verdicts):
    ids = [p["id"] for p in picked] if picked is not None else list(verdicts)
    judged = [i for i in ids if i in verdicts]
    yes = sum(1 for i in judged if verdicts[i][0] == "yes")
    no_reasons = Counter(verdicts[i][1] or "?" for i in judged if verdicts[i][0] == "no")
    yes_reasons = Counter(verdicts[i][1] or "?" for i in judged if verdicts[i][0] == "yes")
    return {
        "judged": len(judged),
        "unjudged": len(ids) - len(judged),
        "yes": yes,
        "no": len(judged) - yes,
        "precision": round(yes / len(judged), 4) if judged else None,
        "no_reasons": dict(no_reasons.most_common()),
        "yes_reasons": dict(yes_reasons.most_common()),
    }


# ---------------------------------------------------------------- running


def run(cmd, timeout, out=None):
    try:
        r = subprocess.run(
            cmd, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        die(f"timed out after {timeout} s: {' '.join(cmd)}")
    except OSError as e:
        die(f"{cmd[0]}: {e}")
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        die(f"{' '.join(cmd)}: exit {r.returncode}: {err[-1] if err else ''}")
    return r


def checkout(git_dir, version, dest):
    tag = version if version.startswith("v") else "v" + version
    r = subprocess.run(
        ["git", "--git-dir", git_dir, "archive", "--format=tar", tag, "system-prompts"],
        capture_output=True,
    )
    if r.returncode != 0:
        die(f"{git_dir}: no tag {tag} ({r.stderr.decode('utf-8', 'replace').strip()})")
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tf:
        for m in tf.getmembers():
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name:
                die(f"{tag}: unexpected entry {m.name!r}")
        try:
            tf.extractall(dest, filter="data")
        except TypeError:  # a Python without extraction filters
            tf.extractall(dest)


# ---------------------------------------------------------------- report


def summary(items):
    by_cat = defaultdict(lambda: [0, 0])
    rules = Counter()
    kinds = Counter()
    matrix = defaultdict(Counter)
    for it in items:
        c = by_cat[it["category"]]
        c[1] += 1
        if it["rule"]:
            c[0] += 1
            rules[it["rule"]] += 1
            kinds[it["kind_agrees"]] += 1
            matrix[it["category"]][it["matched"]["kind"]] += 1
    found = sum(c[0] for c in by_cat.values())
    matched = kinds[True] + kinds[False]
    return {
        "items": len(items),
        "found": found,
        "recall": round(found / len(items), 4) if items else None,
        "by_category": {
            k: {"found": v[0], "items": v[1], "recall": round(v[0] / v[1], 4)}
            for k, v in sorted(by_cat.items())
        },
        "rules": dict(rules),
        "kind_agreement": round(kinds[True] / matched, 4) if matched else None,
        "kind_matrix": {k: dict(v) for k, v in sorted(matrix.items())},
    }


def misses_summary(items):
    by = defaultdict(Counter)
    for it in items:
        if not it["rule"]:
            by[it["category"]][it.get("cause", "?")] += 1
    total = Counter()
    for c in by.values():
        total.update(c)
    places = Counter(it["place"].split(":")[0] for it in items if not it["rule"] and it.get("place"))
    return {
        "total": dict(total.most_common()),
        "by_category": {k: dict(v) for k, v in sorted(by.items())},
        "by_place": dict(places.most_common()),
    }


def pct(x):
    return "—" if x is None else f"{100 * x:.1f} %"


def print_text(res):
    s = res["summary"]
    print(f"catalogue {res.get('catalogue_version') or '?'} against surface of {res.get('target') or '?'}")
    mf = s["model_facing"]
    print(f"recall {pct(s['recall'])} ({s['found']}/{s['items']}); rules: "
          + ", ".join(f"{k} {v}" for k, v in sorted(s["rules"].items())))
    print(f"recall in model-facing texts (not .schemas) {pct(mf['recall'])} ({mf['found']}/{s['items']})")
    print(f"{'category':<18} {'found':>6} {'items':>6} {'recall':>8} {'model-facing':>13}")
    for k, v in s["by_category"].items():
        m = mf["by_category"][k]
        print(f"{k:<18} {v['found']:>6} {v['items']:>6} {pct(v['recall']):>8} {pct(m['recall']):>13}")
    print(f"kind agreement {pct(s['kind_agreement'])}")
    for k, v in s["kind_matrix"].items():
        print(f"  {k:<18} " + ", ".join(f"{kk} {vv}" for kk, vv in sorted(v.items())))
    if "lexer_check" in res:
        c = res["lexer_check"]
        print(f"literals: {c['literals']} read from {c['modules']} modules; "
              f"{c['prompts_equal_to_a_literal']} of our {c['prompts']} prompts equal one")
    m = res["misses_summary"]
    print("misses by cause: " + ", ".join(f"{k} {v}" for k, v in m["total"].items()))
    for k, v in m["by_category"].items():
        print(f"  {k:<18} " + ", ".join(f"{kk} {vv}" for kk, vv in sorted(v.items())))
    print("misses by place of their literal: " + ", ".join(f"{k} {v}" for k, v in m["by_place"].items()))
    print(f"{'miss':<70} {'category':<17} {'bytes':>6} {'near':>5} {'lits':>5}  cause")
    for it in res["misses"]:
        print(f"{it['file']:<70} {it['category']:<17} {it['bytes']:>6} "
              f"{it['near']:>5.2f} {it.get('literal_coverage', 0):>5.2f}  {it.get('cause', '?')}"
              + (f" {it['place']} ({it['literal_bytes']} B)" if it.get("place") else "")
              + (f"  [{', '.join(it['modules'][:3])}]" if it.get("modules") else ""))


def print_sample(picked):
    for p in picked:
        head = _WS.sub(" ", p["text"])[:200]
        print(f"{p['id']}\t{p['kind']}\t{head}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalogue", help="a checkout of the catalogue at one version")
    ap.add_argument("--catalogue-git", help="the catalogue's git dir (with --version)")
    ap.add_argument("--version", help="the version to measure (tag vVERSION; target npm:VERSION/PLATFORM)")
    ap.add_argument("--surface", help="our `surface --json` of that version")
    ap.add_argument("--modules", help="an `extract` output folder of that build (for the causes)")
    ap.add_argument("--bin", help="cc-teardown binary (default: target/release/cc-teardown)")
    ap.add_argument("--platform", default="darwin-arm64")
    ap.add_argument("--store", help="facts store passed to cc-teardown (--store)")
    ap.add_argument("--work", help="keep the checkout, surface.json and modules here (default: a temporary folder)")
    ap.add_argument("--no-causes", action="store_true", help="skip the extraction and the causes")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cc-teardown run")
    ap.add_argument("--sample", type=int, help="draw N of our prompts for a precision verdict")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--verdicts", help="verdict file: `ID yes|no [REASON]` per line")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    work = a.work or tempfile.mkdtemp(prefix="cct-catalogue-")
    os.makedirs(work, exist_ok=True)
    try:
        res = measure(a, work)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        print(json.dumps(res, indent=1, ensure_ascii=False))
    else:
        if "summary" in res:
            print_text(res)
        if "precision" in res:
            p = res["precision"]
            print(f"precision {pct(p['precision'])} ({p['yes']} yes / {p['no']} no"
                  f", {p['unjudged']} unjudged); no: "
                  + ", ".join(f"{k} {v}" for k, v in p["no_reasons"].items()))


def measure(a, work):
    target = f"npm:{a.version}/{a.platform}" if a.version else None
    binary = a.bin or os.path.join(ROOT, "target/release/cc-teardown")
    common = ["--store", a.store] if a.store else []
    surface_path = a.surface
    if not surface_path:
        if not target:
            die("give --surface FILE or --version VERSION")
        surface_path = os.path.join(work, "surface.json")
        with open(surface_path, "wb") as fh:
            run([binary, "surface", target, "--json"] + common, a.timeout, out=fh)
    try:
        with open(surface_path, encoding="utf-8") as fh:
            surface = json.load(fh)
    except (OSError, ValueError) as e:
        die(f"{surface_path}: {e}")
    if not isinstance(surface, dict) or "prompts" not in surface:
        die(f"{surface_path}: not the output of `surface --json` (no prompts)")
    res = {"target": surface.get("target"), "version": surface.get("version")}

    if a.sample:
        picked = sample(surface, a.sample, a.seed)
        res["sample"] = {"n": a.sample, "seed": a.seed, "ids": [p["id"] for p in picked]}
        if not a.json and not a.verdicts:
            print_sample(picked)
        if a.verdicts:
            res["precision"] = precision(picked, read_verdicts(a.verdicts))
    elif a.verdicts:
        res["precision"] = precision(None, read_verdicts(a.verdicts))

    cat_dir = a.catalogue
    if not cat_dir and a.catalogue_git:
        if not a.version:
            die("--catalogue-git needs --version")
        cat_dir = os.path.join(work, "catalogue")
        shutil.rmtree(cat_dir, ignore_errors=True)
        os.makedirs(cat_dir)
        checkout(a.catalogue_git, a.version, cat_dir)
        res["catalogue_version"] = a.version
    if not cat_dir:
        return res
    items = read_catalogue(cat_dir)
    res.setdefault("catalogue_version", a.version)
    texts = our_texts(surface)
    model_facing = copy.deepcopy(items)
    match(model_facing, [t for t in texts if t[0] != "schema"])
    match(items, texts)
    misses = [it for it in items if not it["rule"]]
    if not a.no_causes:
        mod_dir = a.modules
        if not mod_dir and target:
            mod_dir = os.path.join(work, "modules")
            if not os.path.exists(os.path.join(mod_dir, "manifest.json")):
                shutil.rmtree(mod_dir, ignore_errors=True)
                run([binary, "extract", target, "-o", mod_dir] + common, a.timeout)
        if mod_dir:
            ours = [normalise(p["text"]) for p in surface.get("prompts") or []]
            res["lexer_check"] = attribute(misses, read_modules(mod_dir), ours)
    res["summary"] = summary(items)
    mf = summary(model_facing)
    res["summary"]["model_facing"] = {
        k: mf[k] for k in ("found", "recall", "by_category")
    }
    # Kinds are the model-facing texts' (a schema's description has none).
    for k in ("kind_agreement", "kind_matrix"):
        res["summary"][k] = mf[k]
    res["misses_summary"] = misses_summary(items)
    res["misses"] = [
        {
            k: it[k]
            for k in ("file", "category", "bytes", "cc_version", "near", "cause",
                      "place", "literal_bytes", "literal_coverage", "modules")
            if k in it
        }
        for it in sorted(misses, key=lambda x: (x["category"], x["file"]))
    ]
    for m in res["misses"]:
        m["near"] = round(m["near"], 3)
    res["matched"] = [
        {"file": it["file"], "category": it["category"], "rule": it["rule"],
         "score": round(it["score"], 3), "kind_agrees": it["kind_agrees"], **it["matched"]}
        for it in items if it["rule"]
    ]
    return res


if __name__ == "__main__":
    main()
