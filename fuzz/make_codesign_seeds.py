#!/usr/bin/env python3
"""Seeds for the `codesign` fuzz target: signatures written here, byte by
byte, in the shapes whose counts once multiplied the work (issue 27) —
a SuperBlob listing one CodeDirectory 100,000 times, a fat header listing
one slice 50,000 times, CMS with 10,600 certificates or 10,000 signed
attributes, a PE certificate table of many entries — and small, valid
ones for the fuzzer to mutate. Nothing here comes from a real build.

    python3 make_codesign_seeds.py corpus/codesign
"""

import hashlib
import os
import struct
import sys

SUPERBLOB, CODEDIRECTORY, CMS_WRAPPER = 0xFADE0CC0, 0xFADE0C02, 0xFADE0B01


def be32(v):
    return struct.pack(">I", v)


def le32(v):
    return struct.pack("<I", v)


def code_directory(signed, flags=0x2, page_log=12, team=b""):
    ident = b"com.example.seed\0"
    team_at = 88 + len(ident)
    hash_offset = team_at + len(team) + 1
    page = 1 << page_log
    pages = [signed[i : i + page] for i in range(0, len(signed), page)]
    head = bytearray(88)
    head[0:4] = be32(CODEDIRECTORY)
    head[4:8] = be32(hash_offset + 32 * len(pages))
    head[8:12] = be32(0x20400)
    head[12:16] = be32(flags)
    head[16:20] = be32(hash_offset)
    head[20:24] = be32(88)
    head[28:32] = be32(len(pages))
    head[32:36] = be32(len(signed))
    head[36], head[37], head[39] = 32, 2, page_log
    head[48:52] = be32(team_at if team else 0)
    return bytes(head) + ident + team + b"\0" + b"".join(hashlib.sha256(p).digest() for p in pages)


def superblob(index, blobs):
    at = 12 + 8 * len(index)
    offsets = []
    for b in blobs:
        offsets.append(at)
        at += len(b)
    out = be32(SUPERBLOB) + be32(at) + be32(len(index))
    out += b"".join(be32(t) + be32(offsets[i]) for t, i in index)
    return out + b"".join(blobs)


def macho(sign, code_len=4096):
    img = bytearray(48)
    img[0:4] = le32(0xFEEDFACF)
    img[4:8] = le32(0x0100000C)
    img[12:16] = le32(2)
    img[16:20] = le32(1)
    img[20:24] = le32(16)
    img[32:36] = le32(0x1D)
    img[36:40] = le32(16)
    img += bytes(i % 251 for i in range(code_len))
    sig_at = len(img)
    img[40:44] = le32(sig_at)
    img[44:48] = le32(len(sign(bytes(img))))
    return bytes(img) + sign(bytes(img))


def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(b)]) + b + content


def seq(*parts):
    return tlv(0x30, b"".join(parts))


def set_(*parts):
    return tlv(0x31, b"".join(parts))


def integer(v):
    return tlv(0x02, v.to_bytes(v.bit_length() // 8 + 1, "big"))


OID = {
    "sha256": bytes.fromhex("608648016503040201"),
    "rsa": bytes.fromhex("2a864886f70d010101"),
    "sha256rsa": bytes.fromhex("2a864886f70d01010b"),
    "signed": bytes.fromhex("2a864886f70d010702"),
    "data": bytes.fromhex("2a864886f70d010701"),
    "ctype": bytes.fromhex("2a864886f70d010903"),
    "md": bytes.fromhex("2a864886f70d010904"),
    "cn": bytes.fromhex("550403"),
    "spc": bytes.fromhex("2b060104018237020104"),
    "pe": bytes.fromhex("2b06010401823702010f"),
}


def oid(name):
    return tlv(0x06, OID[name])


def alg(name):
    return seq(oid(name))


def rdn_name(cn):
    return seq(set_(seq(oid("cn"), tlv(0x0C, cn.encode()))))


def certificate(serial, issuer, subject):
    tbs = seq(
        tlv(0xA0, integer(2)),
        integer(serial),
        alg("sha256rsa"),
        issuer,
        seq(tlv(0x17, b"250101000000Z"), tlv(0x17, b"350101000000Z")),
        subject,
        seq(alg("rsa"), tlv(0x03, b"\0")),
    )
    return seq(tbs, alg("sha256rsa"), tlv(0x03, b"\0"))


def signed_data(certs, issuer, digest, extra_attrs=(), econtent=None):
    attrs = [
        seq(oid("ctype"), set_(oid("data"))),
        seq(oid("md"), set_(tlv(0x04, digest))),
    ] + list(extra_attrs)
    signer = seq(
        integer(1),
        seq(issuer, integer(1)),
        seq(oid("sha256")),
        tlv(0xA0, b"".join(attrs)),
        alg("rsa"),
        tlv(0x04, b"\x09" * 16),
    )
    encap = seq(oid("spc"), tlv(0xA0, econtent)) if econtent else seq(oid("data"))
    sd = seq(integer(1), set_(seq(oid("sha256"))), encap, tlv(0xA0, b"".join(certs)), set_(signer))
    return seq(oid("signed"), tlv(0xA0, sd))


def cms_signed(make_der):
    def sign(signed):
        cd = code_directory(signed, flags=0x10000, team=b"TEAMID1234")
        der = make_der(hashlib.sha256(cd).digest())
        wrapper = be32(CMS_WRAPPER) + be32(8 + len(der)) + der
        return superblob([(0, 0), (0x10000, 1)], [cd, wrapper])

    return sign


def fat(entries, images):
    out = bytearray(be32(0xCAFEBABE) + be32(len(entries)))
    for cpu, off, size in entries:
        out += be32(cpu) + be32(0) + be32(off) + be32(size) + be32(14)
    for at, img in images:
        if len(out) < at + len(img):
            out += bytes(at + len(img) - len(out))
        out[at : at + len(img)] = img
    return bytes(out)


def pe(make_tables):
    b = bytearray(0x200)
    b[0:2] = b"MZ"
    b[0x3C:0x40] = le32(0x80)
    b[0x80:0x84] = b"PE\0\0"
    opt = 0x84 + 20
    b[0x84 + 16 : 0x84 + 18] = struct.pack("<H", 240)
    b[opt : opt + 2] = struct.pack("<H", 0x20B)
    b[opt + 108 : opt + 112] = le32(16)
    checksum, entry = opt + 64, opt + 112 + 32
    digest = hashlib.sha256(bytes(b[:checksum] + b[checksum + 4 : entry] + b[entry + 8 :])).digest()
    table = b""
    for der in make_tables(digest):
        e = le32(8 + len(der)) + struct.pack("<HH", 0x200, 2) + der
        table += e + bytes(-len(e) % 8)
    b[entry : entry + 4] = le32(len(b))
    b[entry + 4 : entry + 8] = le32(len(table))
    return bytes(b) + table


def authenticode(certs, issuer, digest):
    spc = seq(seq(oid("pe")), seq(alg("sha256"), tlv(0x04, digest)))
    return signed_data(certs, issuer, b"\0" * 32, econtent=spc)


def main(out):
    os.makedirs(out, exist_ok=True)
    issuer = rdn_name("Example CA")
    leaf = certificate(1, issuer, rdn_name("Developer ID Application: Example Ltd (TEAMID1234)"))
    adhoc_one = lambda types: lambda s: superblob([(t, 0) for t in types], [code_directory(s)])
    thin = macho(adhoc_one([0]))
    many_certs = [leaf] + [certificate(i, seq(), seq()) for i in range(2, 10_602)]
    at = (8 + 20 * 50_000 + 16383) // 16384 * 16384
    seeds = {
        "adhoc.macho": thin,
        "signed.macho": macho(cms_signed(lambda d: signed_data([leaf], issuer, d))),
        "cd-100000.macho": macho(adhoc_one([0] * 100_000)),
        "cd-six-types.macho": macho(adhoc_one([0, 0x1000, 0x1001, 0x1002, 0x1003, 0x1004])),
        "fat-50000.macho": fat([(0x0100000C, at, len(thin))] * 50_000, [(at, thin)]),
        "fat-overlap.macho": fat(
            [(0x0100000C, 16384, len(thin)), (0x01000007, 16384 + 4096, len(thin) - 4096)],
            [(16384, thin)],
        ),
        "fat-two.macho": fat(
            [(0x0100000C, 16384, len(thin)), (0x01000007, 32768, len(thin))],
            [(16384, thin), (32768, thin)],
        ),
        "certs-10600.macho": macho(cms_signed(lambda d: signed_data(many_certs, issuer, d))),
        "attributes-10000.macho": macho(
            cms_signed(
                lambda d: signed_data(
                    [leaf],
                    issuer,
                    d,
                    [seq(tlv(0x06, bytes([0x2A, 3, i % 100])), set_(integer(i))) for i in range(10_000)],
                )
            )
        ),
        "signed.exe": pe(lambda d: [authenticode([leaf], issuer, d)]),
        "certs-10600.exe": pe(lambda d: [authenticode(many_certs, issuer, d)]),
        "entries-5000.exe": pe(lambda d: [authenticode([leaf], issuer, d)] * 5000),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "corpus/codesign")
