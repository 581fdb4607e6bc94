#!/usr/bin/env python3
"""Small hostile facts stores, to measure what the history commands take
(docs/internals/security.md, "the facts store and published histories").

    python3 scripts/hostile_stores.py BINARY OUTDIR

BINARY makes each store (so its schema is the binary's own), then rows are
written into it with sqlite3 as a forger would. Prints, per store, the
command to run on it. Needs the `zstd` program. Every byte written is ours:
the facts come from fixtures/js/single.js, written by this project.
"""
import json
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile

EMPTY_SUMMARY = '{"counts":{},"flags":{},"prompt_bytes":0,"workflows":[]}'
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "js", "single.js")


def zstd(data, *args):
    return subprocess.run(["zstd", "-q", "-c", *args], input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def made_by(binary, path):
    """A store made by BINARY holding the fixture's facts; its connection
    and analysis version."""
    cache = tempfile.mkdtemp()
    subprocess.run([binary, "flags", FIXTURE, "--quiet", "--json", "--cache-dir", cache,
                    "--store", path], check=True, stdout=subprocess.DEVNULL)
    c = sqlite3.connect(path)
    version = c.execute("SELECT analysis_version FROM facts").fetchone()[0]
    return c, version


def release(c, version, build, v, ok="ok"):
    c.execute("INSERT OR REPLACE INTO releases (version, platform, build_id, status, analysis_version)"
              " VALUES (?, 'darwin-arm64', ?, ?, ?)", (v, build, ok, version))


def build(c, digest):
    c.execute("INSERT INTO builds (digest) VALUES (?)", (digest,))
    return c.execute("SELECT id FROM builds WHERE digest = ?", (digest,)).fetchone()[0]


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def search_store(binary, path):
    """A build list of a million repeated ids (1.1 MB)."""
    c, version = made_by(binary, path)
    b = build(c, "d" * 64)
    for i in range(200):
        release(c, version, b, f"1.0.{i}")
    c.execute("INSERT INTO build_summary (build_id, summary, names) VALUES (?, ?, x'')", (b, EMPTY_SUMMARY))
    blob = varint(b) + b"\x00" * 1_000_000
    c.execute("INSERT INTO search_names (hash, kind, name, builds) VALUES (1, 'flag', 'needle', ?)", (blob,))
    c.execute("INSERT OR REPLACE INTO search_state (key, value) VALUES ('items', 7), ('index', 7)")
    c.commit()
    c.close()
    return ["history", "search", "needle", "--json"]


def timeline_store(binary, path):
    """One name hash repeated 36,000 times, its name 100 kB (290 kB)."""
    c, version = made_by(binary, path)
    x, y = build(c, "a" * 64), build(c, "b" * 64)
    release(c, version, x, "1.0.0")
    release(c, version, y, "1.0.1")
    h = 12345
    c.execute("INSERT INTO names (hash, kind, name) VALUES (?, 'flag', ?)", (h, "n" * 100_000))
    c.execute("INSERT INTO build_summary (build_id, summary, names) VALUES (?, ?, ?)",
              (x, EMPTY_SUMMARY, struct.pack("<q", h) * 36_000))
    c.execute("INSERT INTO build_summary (build_id, summary, names) VALUES (?, ?, x'')", (y, EMPTY_SUMMARY))
    c.commit()
    c.close()
    return ["history", "timeline", "--platform", "darwin-arm64", "--format", "md"]


def show_store(binary, path):
    """A 1 MB value, in one build that 3,000 releases share (1.1 MB)."""
    c, version = made_by(binary, path)
    b = build(c, "c" * 64)
    for i in range(3000):
        release(c, version, b, f"1.{i // 100}.{i % 100}")
    value = json.dumps({"kind": "feature", "defaults": [[0] * 500_000]})
    c.execute("INSERT INTO items (build_id, kind, name, value) VALUES (?, 'flag', 'f', ?)", (b, value))
    c.commit()
    c.close()
    return ["history", "show", "flag", "f", "--platform", "darwin-arm64", "--json"]


def changes_store(binary, path):
    """Facts that inflate to ~520 MB of JSON from a 160 kB store: the
    fixture's facts with one gate repeated."""
    c, version = made_by(binary, path)
    body = c.execute("SELECT body FROM facts").fetchone()[0]
    facts = json.loads(zstd(body, "-d"))
    gate = json.dumps(facts["gates"][0] if facts["gates"] else {}).encode()
    head = json.dumps({k: v for k, v in facts.items() if k != "gates"})[:-1].encode()
    n = 520_000_000 // (len(gate) + 1)
    big = head + b', "gates": [' + b",".join([gate] * n) + b"]}"
    body = zstd(big, "-3")
    sha = __import__("hashlib").sha256(body).hexdigest()
    a, b = build(c, "e" * 64), build(c, "f" * 64)
    for i, bid in ((0, a), (1, b)):
        c.execute("INSERT INTO facts (build_id, analysis_version, encoding, body, body_sha256)"
                  " VALUES (?, ?, 'json+zstd', ?, ?)", (bid, version, body, sha))
        release(c, version, bid, f"1.0.{i}")
    c.commit()
    c.close()
    return ["history", "changes", "1.0.1", "--platform", "darwin-arm64", "--json"]


def missing_build_store(binary, path):
    """One release names a build the store does not hold."""
    c, version = made_by(binary, path)
    b = build(c, "9" * 64)
    release(c, version, b, "1.0.0")
    c.execute("PRAGMA foreign_keys = OFF")
    release(c, version, 999, "1.0.1")
    c.commit()
    c.close()
    return ["history", "list", "--json"]


def main():
    binary, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name, make in [("search", search_store), ("timeline", timeline_store),
                       ("show", show_store), ("changes", changes_store),
                       ("missing", missing_build_store)]:
        path = os.path.join(out, f"{name}.sqlite")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        args = make(binary, path)
        done = sqlite3.connect(path)
        done.execute("VACUUM")
        done.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        done.close()
        print(f"{name}\t{os.path.getsize(path)}\t--store {path} " + " ".join(args))


if __name__ == "__main__":
    main()
