#!/usr/bin/env python3
"""Seed corpus for the `parse` fuzz target: the fixture payloads as they are,
plus a few wrapped in minimal ELF / PE / Mach-O (thin and fat) containers.
Usage: python3 fuzz/make_seeds.py fuzz/corpus/parse"""
import struct, glob, os, shutil, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for p in sorted(glob.glob('/work/main/fixtures/bun/*/payload.bin')):
    shutil.copy(p, os.path.join(out, 'raw-' + p.split('/')[-2] + '.bin'))

def pay(v):
    return open(f'/work/main/fixtures/bun/{v}/payload.bin','rb').read()

def elf(payload, section=True, width=8):
    ehsize = 64
    shstr = b'\0.bun\0.shstrtab\0'
    sec = (struct.pack('<Q', len(payload)) if width == 8 else struct.pack('<I', len(payload))) + payload
    sec_off = ehsize
    str_off = sec_off + len(sec)
    sh_off = (str_off + len(shstr) + 7) & ~7
    shnum = 3 if section else 0
    hdr = b'\x7fELF' + bytes([2, 1, 1, 0]) + b'\0'*8
    hdr += struct.pack('<HHIQQQIHHHHHH', 2, 62, 1, 0x400000, 0, sh_off if section else 0, 0, ehsize, 56, 0, 64, shnum, 2 if section else 0)
    assert len(hdr) == 64
    if not section:
        body = hdr + b'\0'*64 + payload
        return body + struct.pack('<Q', len(body) + 8)
    body = bytearray(hdr + sec + shstr)
    body += b'\0' * (sh_off - len(body))
    def sh(name, typ, flags, off, size):
        return struct.pack('<IIQQQQIIQQ', name, typ, flags, 0, off, size, 0, 0, 1, 0)
    body += sh(0, 0, 0, 0, 0)
    body += sh(1, 1, 2, sec_off, len(sec))
    body += sh(6, 3, 0, str_off, len(shstr))
    return bytes(body)

def pe(payload):
    dos = bytearray(64); dos[0:2] = b'MZ'; struct.pack_into('<I', dos, 0x3c, 64)
    coff = b'PE\0\0' + struct.pack('<HHIIIHH', 0x8664, 1, 0, 0, 0, 0, 0x22)
    sec = struct.pack('<I', len(payload)) + payload
    raw_off = 64 + len(coff) + 40
    raw_off = (raw_off + 0x1ff) & ~0x1ff
    size_raw = (len(sec) + 0x1ff) & ~0x1ff
    sh = b'.bun\0\0\0\0' + struct.pack('<IIIIIIHHI', len(sec), 0x1000, size_raw, raw_off, 0, 0, 0, 0, 0x40000040)
    body = bytearray(dos + coff + sh)
    body += b'\0' * (raw_off - len(body))
    body += sec + b'\0' * (size_raw - len(sec))
    return bytes(body)

def macho(payload, cpu=0x0100000C):
    sec = struct.pack('<Q', len(payload)) + payload
    ncmds = 1
    cmdsize = 72 + 80
    hdr = struct.pack('<IiiIIIII', 0xfeedfacf, cpu, 0, 2, ncmds, cmdsize, 0, 0)
    data_off = (len(hdr) + cmdsize + 0xf) & ~0xf
    seg = struct.pack('<II16sQQQQiiII', 0x19, cmdsize, b'__BUN', 0x100000000, len(sec), data_off, len(sec), 1, 1, 1, 0)
    s = struct.pack('<16s16sQQIIIIIIII', b'__bun', b'__BUN', 0x100000000, len(sec), data_off, 0, 0, 0, 0, 0, 0, 0)
    body = bytearray(hdr + seg + s)
    body += b'\0' * (data_off - len(body))
    body += sec
    return bytes(body)

def fat(thin_arm, thin_x86):
    align = 0x1000
    off1 = align; off2 = (off1 + len(thin_arm) + align - 1) // align * align
    h = struct.pack('>II', 0xcafebabe, 2)
    h += struct.pack('>iiIII', 0x0100000C, 0, off1, len(thin_arm), 12)
    h += struct.pack('>iiIII', 0x01000007, 3, off2, len(thin_x86), 12)
    body = bytearray(h); body += b'\0' * (off1 - len(body)); body += thin_arm
    body += b'\0' * (off2 - len(body)); body += thin_x86
    return bytes(body)

w = lambda name, b: open(os.path.join(out, name), 'wb').write(b)
w('elf-section-1.4.5.bin', elf(pay('1.4.5-linux-x64')))
w('elf-section4-1.3.14.bin', elf(pay('1.3.14-linux-x64'), width=4))
w('elf-appended-1.1.26.bin', elf(pay('1.1.26-linux-x64'), section=False))
w('pe-section-1.2.21.bin', pe(pay('1.2.21-windows-x64')))
w('macho-section-1.3.9.bin', macho(pay('1.3.9-darwin-arm64')))
w('macho-fat-1.2.4.bin', fat(macho(pay('1.2.4-darwin-arm64')), macho(pay('1.2.4-darwin-arm64'), 0x01000007)))
w('js-tiny.js', b'#!/usr/bin/env node\nconsole.log("hi")\n')
