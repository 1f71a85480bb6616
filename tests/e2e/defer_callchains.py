#!/usr/bin/env python3
"""defer_callchains.py IN OUT ORDER: rewrites a little-endian file-mode
`perf record -g` capture the way Linux 6.19+ records `--call-graph
fp,defer` (which this machine's kernel cannot): every attr gets the
defer_callchain bit, and every sample whose callchain has a user part
keeps only its kernel part, followed by PERF_CONTEXT_USER_DEFERRED and a
cookie; the user part moves into a PERF_RECORD_CALLCHAIN_DEFERRED record
of that thread with the same cookie, placed right after the sample and
timed halfway to the thread's next sample (or 1 ns after its last), as
the kernel writes it when the thread returns to user space.

ORDER receives, one per line, the time-order position of each sample of
IN in the order perf script 6.19+ delivers the samples of OUT (a deferred
sample goes out when its record is processed: samples of other threads
may go first); the test reorders perf script's blocks of IN with it to
get the expected text of OUT. Samples of one thread never overtake each
other, and with the halfway timing each sample is released before the
thread's next one."""
import struct
import sys

SAMPLE, CALLCHAIN_DEFERRED = 9, 22
CONTEXT_USER = 0xFFFFFFFFFFFFFE00
CONTEXT_USER_DEFERRED = (1 << 64) - 640
DEFER_CALLCHAIN = 1 << 38
SAMPLE_ID_ALL = 1 << 18
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN = 1, 2, 4, 8, 16, 32
S_ID, S_CPU, S_PERIOD, S_STREAM_ID, S_IDENTIFIER = 64, 128, 256, 512, 1 << 16
FEATURE_BITS = 256


def fail(msg):
    sys.exit(f"defer_callchains.py: {msg}")


def parse_sample(rec, sample_type):
    """Field values and the callchain's position in a SAMPLE record."""
    pos, f = 8, {}
    if sample_type & S_IDENTIFIER:
        f["identifier"] = struct.unpack_from("<Q", rec, pos)[0]
        pos += 8
    if sample_type & S_IP:
        pos += 8
    if sample_type & S_TID:
        f["pid"], f["tid"] = struct.unpack_from("<II", rec, pos)
        pos += 8
    if sample_type & S_TIME:
        f["time"] = struct.unpack_from("<Q", rec, pos)[0]
        pos += 8
    if sample_type & S_ADDR:
        pos += 8
    if sample_type & S_ID:
        f["id"] = struct.unpack_from("<Q", rec, pos)[0]
        pos += 8
    if sample_type & S_STREAM_ID:
        f["stream_id"] = struct.unpack_from("<Q", rec, pos)[0]
        pos += 8
    if sample_type & S_CPU:
        f["cpu"] = struct.unpack_from("<I", rec, pos)[0]
        pos += 8
    if sample_type & S_PERIOD:
        pos += 8
    if sample_type & S_READ:
        fail("PERF_SAMPLE_READ is not handled")
    if not sample_type & S_CALLCHAIN:
        fail("the capture has no callchains")
    return f, pos


def trailer(sample_type, f, time):
    """The sample_id trailer of a non-sample record, in perf's order."""
    out = b""
    if sample_type & S_TID:
        out += struct.pack("<II", f["pid"], f["tid"])
    if sample_type & S_TIME:
        out += struct.pack("<Q", time)
    if sample_type & S_ID:
        out += struct.pack("<Q", f["id"])
    if sample_type & S_STREAM_ID:
        out += struct.pack("<Q", f["stream_id"])
    if sample_type & S_CPU:
        out += struct.pack("<II", f["cpu"], 0)
    if sample_type & S_IDENTIFIER:
        out += struct.pack("<Q", f["identifier"])
    return out


def main():
    src, dst, order_path = sys.argv[1:4]
    data = bytearray(open(src, "rb").read())
    if data[:8] != b"PERFILE2" or struct.unpack_from("<Q", data, 8)[0] != 104:
        fail(f"{src}: not a little-endian file-mode capture")
    attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<5Q", data, 16)
    sample_types = set()
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        flags = struct.unpack_from("<Q", data, a + 40)[0]
        if not flags & SAMPLE_ID_ALL:
            fail("the attrs lack sample_id_all")
        struct.pack_into("<Q", data, a + 40, flags | DEFER_CALLCHAIN)
        sample_types.add(struct.unpack_from("<Q", data, a + 24)[0])
    if len(sample_types) != 1:
        fail("events with different sample types")
    sample_type = sample_types.pop()

    # the records, and each sample's thread and time
    recs, samples = [], []
    off = data_off
    while off < data_off + data_size:
        rtype, _misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8:
            fail(f"record of size {size} at {off:#x}")
        rec = bytes(data[off:off + size])
        recs.append((rtype, rec))
        if rtype == SAMPLE:
            f, _ = parse_sample(rec, sample_type)
            samples.append((f["time"], len(samples), f["tid"]))
        off += size
    # time order (stable), each sample's release time, and the delivery
    # order those give
    by_time = sorted(samples)
    rank = {idx: r for r, (_t, idx, _tid) in enumerate(by_time)}
    nxt, release = {}, {}
    for t, idx, tid in reversed(by_time):
        release[idx] = (t + nxt[tid]) // 2 if tid in nxt and nxt[tid] - t > 1 else t + 1
        nxt[tid] = t
    deferred, events = set(), []

    out = bytearray()
    n = 0
    for rtype, rec in recs:
        if rtype != SAMPLE:
            out += rec
            continue
        idx, n = n, n + 1
        f, pos = parse_sample(rec, sample_type)
        nr = struct.unpack_from("<Q", rec, pos)[0]
        ips = list(struct.unpack_from(f"<{nr}Q", rec, pos + 8))
        rest = rec[pos + 8 + 8 * nr:]
        if CONTEXT_USER not in ips:
            out += rec
            events.append((f["time"], 0, idx, "sample"))
            continue
        at = ips.index(CONTEXT_USER)
        cookie = 0x10000 + idx
        chain = ips[:at] + [CONTEXT_USER_DEFERRED, cookie]
        body = rec[8:pos] + struct.pack(f"<Q{len(chain)}Q", len(chain), *chain) + rest
        out += struct.pack("<IHH", SAMPLE, struct.unpack_from("<H", rec, 4)[0], 8 + len(body))
        out += body
        user = ips[at:]
        drec = (struct.pack(f"<QQ{len(user)}Q", cookie, len(user), *user) +
                trailer(sample_type, f, release[idx]))
        out += struct.pack("<IHH", CALLCHAIN_DEFERRED, 2, 8 + len(drec)) + drec
        deferred.add(idx)
        events.append((f["time"], 0, idx, "held"))
        events.append((release[idx], 1, idx, "release"))

    # perf's delivery: records in time order (a record after a sample of
    # the same time); a release delivers its thread's held samples
    order, held = [], {}
    tid_of = {idx: tid for _t, idx, tid in samples}
    for _t, _k, idx, what in sorted(events, key=lambda e: (e[0], e[1], rank[e[2]])):
        if what == "sample":
            order.append(idx)
        elif what == "held":
            held.setdefault(tid_of[idx], []).append(idx)
        else:
            order += held.pop(tid_of[idx], [])
    for rest in held.values():
        order += rest
    with open(order_path, "w") as fh:
        fh.writelines(f"{rank[idx]}\n" for idx in order)

    # the header: the data section grew; the feature sections moved
    delta = len(out) - data_size
    features = data[data_off + data_size:]
    nfeat = sum(bin(b).count("1") for b in data[72:104])
    for i in range(nfeat):
        o = struct.unpack_from("<Q", features, 16 * i)[0]
        struct.pack_into("<Q", features, 16 * i, o + delta)
    struct.pack_into("<Q", data, 48, len(out))
    open(dst, "wb").write(bytes(data[:data_off]) + bytes(out) + bytes(features))
    print(f"{len(deferred)} of {len(samples)} samples deferred")


if __name__ == "__main__":
    main()
