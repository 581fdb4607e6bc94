#!/usr/bin/env python3
"""Seed corpus for the `store` fuzz target: small valid stores made by the
binary (so their schema is its own), holding the fixture's facts sealed
with the fuzz target's key, a short history (releases, items, texts,
summaries, the search index, a stored `changes` answer), shrunk to 512-byte
pages so each seed is a few tens of kilobytes.

Usage: python3 fuzz/make_store_seeds.py BINARY fuzz/corpus/store
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "js")


def main():
    binary, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp()
    cache = os.path.join(work, "cache")
    os.makedirs(cache)
    key = os.path.join(cache, "store.key")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"\x01" * 32)  # the fuzz target's key
    os.close(fd)
    for n, fixture in enumerate(["single.js", "diff/a.js", "diff/b.js"]):
        path = os.path.join(work, f"seed{n}.sqlite")
        run = lambda *a: subprocess.run([binary, *a, "--quiet", "--json", "--cache-dir", cache,
                                         "--store", path], stdout=subprocess.DEVNULL)
        run("flags", os.path.join(FIXTURES, fixture))
        c = sqlite3.connect(path)
        digest, body, sha, version, encoding = c.execute(
            "SELECT b.digest, f.body, f.body_sha256, f.analysis_version, f.encoding"
            " FROM facts f JOIN builds b ON b.id = f.build_id").fetchone()
        ids = []
        for i, d in enumerate([digest, "f" * 64]):
            c.execute("INSERT OR IGNORE INTO builds (digest) VALUES (?)", (d,))
            bid = c.execute("SELECT id FROM builds WHERE digest = ?", (d,)).fetchone()[0]
            ids.append(bid)
            c.execute("INSERT OR IGNORE INTO facts (build_id, analysis_version, encoding, body, body_sha256)"
                      " VALUES (?, ?, ?, ?, ?)", (bid, version, encoding, body, sha))
            c.execute("INSERT INTO releases (version, platform, build_id, status, analysis_version)"
                      " VALUES (?, 'darwin-arm64', ?, 'ok', ?)", (f"1.0.{i}", bid, version))
            c.execute("INSERT INTO items (build_id, kind, name, value) VALUES (?, 'flag', 'tengu_seed',"
                      " ?)", (bid, '{"kind":"feature","defaults":[%s]}' % ("true" if i else "false")))
            c.execute("INSERT INTO items (build_id, kind, name, value) VALUES (?, 'prompt', 'p',"
                      " '{\"text_sha256\":\"h\",\"bytes\":12}')", (bid,))
        c.execute("INSERT INTO texts (sha256, text) VALUES ('h', 'a seed text\nof two lines')")
        c.execute("INSERT INTO releases (version, platform, status, error, analysis_version)"
                  " VALUES ('1.0.2', 'darwin-arm64', 'failed', 'no network', ?)", (version,))
        c.commit()
        c.close()
        # Summaries, the search index and a stored answer, made by the binary.
        run("history", "search", "seed")
        run("history", "changes", "1.0.1", "--platform", "darwin-arm64")
        c = sqlite3.connect(path)
        c.execute("PRAGMA journal_mode = DELETE")
        c.execute("PRAGMA page_size = 512")
        c.execute("VACUUM")
        c.close()
        with open(path, "rb") as f:
            data = f.read()
        with open(os.path.join(out, f"seed{n}.sqlite"), "wb") as f:
            f.write(data)
        print(f"seed{n}.sqlite: {len(data)} bytes")


if __name__ == "__main__":
    main()
