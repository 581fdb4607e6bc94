#!/usr/bin/env python3
"""Read-the-whole-file baseline for `cc-teardown info`.

This is what the peer tools do: read the entire executable into memory,
search for Bun's trailer from the end, decode the Offsets struct in front of
it, and SHA-256 the entry module's contents (the "bundle"). It prints the
bundle's SHA-256 (lowercase hex) and nothing else, so bench/run.sh can check
that it agrees with `cc-teardown info`.

Layout (Bun 1.2.x - 1.4.x standalone graphs):
  payload ... | module records | Offsets (32 bytes) | "\\n---- Bun! ----\\n"
  Offsets: u64 byte_count, u32 modules_off, u32 modules_len, u32 entry_id, ...
  payload start = offsets_pos - byte_count; pointers are relative to it.
  Module record (52 bytes): six {u32 off, u32 len} pointers (name, contents,
  sourcemap, bytecode, ...) followed by four one-byte fields.
"""
import hashlib
import struct
import sys

TRAILER = b"\n---- Bun! ----\n"
OFFSETS_SIZE = 32
RECORD_SIZE = 52


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: baseline_read_whole.py EXECUTABLE", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        data = f.read()  # the whole file, on purpose
    t = data.rfind(TRAILER)
    if t < 0:
        print("no Bun trailer", file=sys.stderr)
        return 1
    offsets_pos = t - OFFSETS_SIZE
    byte_count, modules_off, modules_len, entry_id = struct.unpack_from(
        "<QIII", data, offsets_pos
    )
    start = offsets_pos - byte_count
    if start < 0 or modules_len % RECORD_SIZE:
        print("implausible Offsets", file=sys.stderr)
        return 1
    if entry_id >= modules_len // RECORD_SIZE:
        print("entry id out of range", file=sys.stderr)
        return 1
    rec = start + modules_off + entry_id * RECORD_SIZE
    _name_off, _name_len, off, length = struct.unpack_from("<IIII", data, rec)
    bundle = data[start + off : start + off + length]
    if len(bundle) != length:
        print("bundle out of range", file=sys.stderr)
        return 1
    print(hashlib.sha256(bundle).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
