#!/usr/bin/env python3
"""kernel_elsewhere.py IN OUT: a copy of the perf.data IN (file mode, as
perf record writes it) that says it was recorded on another machine with
another kernel: the HOSTNAME feature's name becomes another of the same
length, and the build-id the BUILD_ID feature gives [kernel.kallsyms]
changes in its last byte. Prints the new kernel build-id in hex. Sizes
and offsets stay as they were, so every other byte is IN's."""
import struct
import sys

HEADER_BUILD_ID = 2
HEADER_HOSTNAME = 3
MISC_BUILD_ID_SIZE = 1 << 15


def fail(why):
    sys.exit("kernel_elsewhere.py: %s: %s" % (sys.argv[1], why))


def feature_sections(data):
    if data[:8] != b"PERFILE2":
        fail("not a perf.data file (magic %r)" % data[:8])
    data_offset, data_size = struct.unpack_from("<QQ", data, 40)
    bits = int.from_bytes(data[72:104], "little")
    at = data_offset + data_size
    sections = {}
    for bit in range(256):
        if bits >> bit & 1:
            sections[bit] = struct.unpack_from("<QQ", data, at)
            at += 16
    return sections


def change_hostname(data, offset):
    length = struct.unpack_from("<I", data, offset)[0]
    name = bytes(data[offset + 4:offset + 4 + length]).split(b"\0")[0]
    other = bytes(ord("y") if c == ord("x") else ord("x") for c in name)
    data[offset + 4:offset + 4 + len(other)] = other


def change_kernel_build_id(data, offset, size):
    at, end = offset, offset + size
    while at + 8 <= end:
        _, misc, rec_size = struct.unpack_from("<IHH", data, at)
        if rec_size < 36:
            fail("build-id record of %d bytes" % rec_size)
        name = bytes(data[at + 36:at + rec_size]).split(b"\0")[0]
        id_size = data[at + 32] if misc & MISC_BUILD_ID_SIZE else 20
        if name == b"[kernel.kallsyms]" and 0 < id_size <= 20:
            data[at + 12 + id_size - 1] ^= 0xFF
            return bytes(data[at + 12:at + 12 + id_size]).hex()
        at += rec_size
    fail("no build-id for [kernel.kallsyms]")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: kernel_elsewhere.py IN OUT")
    with open(sys.argv[1], "rb") as f:
        data = bytearray(f.read())
    sections = feature_sections(data)
    for bit in (HEADER_BUILD_ID, HEADER_HOSTNAME):
        if bit not in sections:
            fail("no feature %d" % bit)
    change_hostname(data, sections[HEADER_HOSTNAME][0])
    new_id = change_kernel_build_id(data, *sections[HEADER_BUILD_ID])
    with open(sys.argv[2], "wb") as f:
        f.write(data)
    print(new_id)


main()
