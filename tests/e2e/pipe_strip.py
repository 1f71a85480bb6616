#!/usr/bin/env python3
"""pipe_strip.py IN OUT KINDS: copies a native-endian pipe-mode capture
(`perf record -o -`) without the records KINDS names, a comma-separated
list of: update (PERF_RECORD_EVENT_UPDATE), desc (the EVENT_DESC
HEADER_FEATURE), tracing (PERF_RECORD_HEADER_TRACING_DATA and the tracing
data after it). What older perf versions, or other writers, leave out:
script_pipe_names.sh checks where event names then come from."""
import struct
import sys

EVENT_UPDATE, TRACING_DATA, HEADER_FEATURE = 78, 66, 80
FEAT_EVENT_DESC = 12


def main():
    src, dst, kinds = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
    data = open(src, "rb").read()
    if data[:8] != b"PERFILE2" or struct.unpack_from("<Q", data, 8)[0] != 16:
        sys.exit(f"{src}: not a little-endian pipe-mode capture")
    out = bytearray(data[:16])
    off = 16
    while off + 8 <= len(data):
        rtype, _misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8:
            sys.exit(f"{src}: record of size {size} at {off}")
        end = off + size
        if rtype == TRACING_DATA:
            end += struct.unpack_from("<I", data, off + 8)[0]
        drop = (
            (rtype == EVENT_UPDATE and "update" in kinds)
            or (rtype == TRACING_DATA and "tracing" in kinds)
            or (rtype == HEADER_FEATURE and "desc" in kinds
                and struct.unpack_from("<Q", data, off + 8)[0] == FEAT_EVENT_DESC)
        )
        if not drop:
            out += data[off:end]
        off = end
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
