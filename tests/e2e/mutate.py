#!/usr/bin/env python3
"""Mutants of a capture for tests/e2e/mutants.sh: byte flips, truncations
and spliced records of a perf.data (file or pipe mode), and mutated lines of
a perf map beside it. Deterministic for a given seed.

  usage: mutate.py CAPTURE OUTDIR COUNT SEED [MAP]

Writes OUTDIR/NNNN/perf.data (and, with MAP, perf-PID.map beside it named as
MAP is), one directory per mutant, so that each capture finds its own map;
with MAP, a quarter of the mutants keep the capture and mutate only the map.
Prints one line per mutant: its directory and what was done to it.
"""
import os
import random
import struct
import sys

INTERESTING8 = [0x00, 0x01, 0x7F, 0x80, 0xFF]
INTERESTING32 = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF, 0x10000, 4096]
INTERESTING64 = [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 32, 0xFFFFFFFF]


def records(data):
    """(offset, size) of the top-level records, and whether the capture is
    in pipe mode; walks as far as the sizes make sense."""
    if len(data) < 16 or data[:8] != b"PERFILE2":
        return [], False
    pipe = struct.unpack_from("<Q", data, 8)[0] == 16
    if pipe:
        offset, end = 16, len(data)
    else:
        if len(data) < 104:
            return [], False
        offset, size = struct.unpack_from("<QQ", data, 40)
        end = min(len(data), offset + size)
    found = []
    while offset + 8 <= end:
        size = struct.unpack_from("<H", data, offset + 6)[0]
        if size < 8 or offset + size > end:
            break
        found.append((offset, size))
        offset += size
    return found, pipe


def shift_features(data, delta):
    """File mode: after the data section grew or shrank by delta bytes, move
    the feature table's offsets and the data size with it."""
    data_offset, data_size = struct.unpack_from("<QQ", data, 40)
    struct.pack_into("<Q", data, 48, data_size + delta)
    bits = struct.unpack_from("<4Q", data, 72)
    table = data_offset + data_size + delta
    for i in range(sum(bin(b).count("1") for b in bits)):
        at = table + 16 * i
        if at + 16 > len(data):
            break
        offset = struct.unpack_from("<Q", data, at)[0]
        struct.pack_into("<Q", data, at, (offset + delta) % (1 << 64))


def flip(rng, data):
    done = []
    for _ in range(rng.randint(1, 8)):
        if not data:
            break
        # headers, attrs and the first records are dense with structure
        at = rng.randrange(min(len(data), 4096)) if rng.random() < 0.5 else rng.randrange(len(data))
        how = rng.randrange(4)
        if how == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif how == 1:
            data[at] = rng.choice(INTERESTING8)
        elif how == 2 and at + 4 <= len(data):
            struct.pack_into("<I", data, at, rng.choice(INTERESTING32))
        elif at + 8 <= len(data):
            struct.pack_into("<Q", data, at, rng.choice(INTERESTING64))
        done.append(at)
    return "flip %s" % ",".join("%#x" % a for a in done)


def truncate(rng, data, recs):
    if recs and rng.random() < 0.5:
        offset, size = rng.choice(recs)
        cut = offset + rng.randrange(size + 1)
    else:
        cut = rng.randrange(len(data))
    del data[cut:]
    return "truncate %#x" % cut


def splice(rng, data, recs, pipe):
    if len(recs) < 2:
        return flip(rng, data)
    how = rng.randrange(4)
    i, j = sorted(rng.sample(range(len(recs)), 2))
    (oi, si), (oj, sj) = recs[i], recs[j]
    if how == 0:
        # swap two records (the length stays)
        a, b = bytes(data[oi:oi + si]), bytes(data[oj:oj + sj])
        data[oj:oj + sj] = a
        data[oi:oi + si] = b
        return "swap records %#x %#x" % (oi, oj)
    if how == 1:
        # a record again, somewhere else
        copy = bytes(data[oj:oj + sj])
        data[oi:oi] = copy
        if not pipe:
            shift_features(data, sj)
        return "duplicate record %#x at %#x" % (oj, oi)
    if how == 2:
        del data[oi:oi + si]
        if not pipe:
            shift_features(data, -si)
        return "delete record %#x" % oi
    # one record's body over another's, sizes kept
    n = min(si, sj) - 8
    data[oi + 8:oi + 8 + n] = data[oj + 8:oj + 8 + n]
    return "body of %#x over %#x" % (oj, oi)


def mutate_map(rng, lines):
    lines = list(lines)
    done = []
    for _ in range(rng.randint(1, 4)):
        if not lines:
            lines.append(b"")
        i = rng.randrange(len(lines))
        fields = lines[i].split(b" ", 2)
        how = rng.randrange(8)
        if how == 0 and lines[i]:
            at = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + bytes([rng.randrange(256)]) + lines[i][at + 1:]
        elif how == 1:
            del lines[i]
        elif how == 2:
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif how == 3 and len(fields) == 3:
            fields[0] = b"%x" % rng.choice([0, 1, (1 << 64) - 1, rng.randrange(1 << 48)])
            lines[i] = b" ".join(fields)
        elif how == 4 and len(fields) == 3:
            fields[1] = b"%x" % rng.choice([0, 1 << 63, (1 << 64) - 1, 1 << 40])
            lines[i] = b" ".join(fields)
        elif how == 5:
            lines.insert(i, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))))
        elif how == 6:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        else:
            lines[i] = lines[i] + b"x" * rng.choice([100, 5000, 70000])
        done.append(how)
    return lines, "map %s" % ",".join(str(d) for d in done)


def main():
    capture, outdir, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    map_path = sys.argv[5] if len(sys.argv) > 5 else None
    original = open(capture, "rb").read()
    map_lines = open(map_path, "rb").read().split(b"\n") if map_path else None
    recs, pipe = records(original)
    rng = random.Random("%s:%s" % (seed, os.path.basename(capture)))
    for n in range(count):
        data = bytearray(original)
        lines = map_lines
        if map_path and rng.random() < 0.25:
            lines, what = mutate_map(rng, map_lines)
        else:
            kind = rng.random()
            if kind < 0.5:
                what = flip(rng, data)
            elif kind < 0.7:
                what = truncate(rng, data, recs)
            else:
                what = splice(rng, data, recs, pipe)
        directory = os.path.join(outdir, "%04d" % n)
        os.makedirs(directory)
        with open(os.path.join(directory, "perf.data"), "wb") as f:
            f.write(data)
        if map_path:
            with open(os.path.join(directory, os.path.basename(map_path)), "wb") as f:
                f.write(b"\n".join(lines))
        print("%s %s" % (directory, what))


if __name__ == "__main__":
    main()
