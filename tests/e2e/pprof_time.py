"""Helpers for tests/e2e/pprof_start_time.sh.

  pprof_time.py time PROFILE.pb.gz
      prints the profile's time_nanos (field 9 of Profile; 0 when absent)
  pprof_time.py sample-time IN.data OUT.data NANOSECONDS
      copies a perf.data file with the time of its last sample set to
      NANOSECONDS (a damaged clock); every attr must have the same
      sample_type, with PERF_SAMPLE_TIME
  pprof_time.py manifest-mtime IN.pst OUT.pst SECONDS
      copies a pystitch archive with its MANIFEST's mtime line set to
      SECONDS (through the zstd program)
"""
import gzip
import io
import struct
import subprocess
import sys
import tarfile

SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME = 1 << 16, 1, 2, 4
RECORD_SAMPLE = 9


def varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def time_nanos(path):
    buf = gzip.open(path).read()
    pos, found = 0, 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
            if field == 9:
                found = value
        elif wire == 2:
            size, pos = varint(buf, pos)
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise SystemExit(f"{path}: wire type {wire} at {pos}")
    return found


def sample_time(src, dst, nanoseconds):
    data = bytearray(open(src, "rb").read())
    if data[:8] != b"PERFILE2":
        raise SystemExit(f"{src}: not a perf.data file in file mode")
    attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<5Q", data, 16)
    types = {struct.unpack_from("<Q", data, off + 24)[0]
             for off in range(attrs_off, attrs_off + attrs_size, attr_size)}
    if len(types) != 1 or not next(iter(types)) & SAMPLE_TIME:
        raise SystemExit(f"{src}: sample types {types}: not one with PERF_SAMPLE_TIME")
    sample_type = types.pop()
    where = 8 + 8 * sum(bool(sample_type & bit) for bit in (SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID))
    last = None
    pos = data_off
    while pos + 8 <= data_off + data_size:
        kind, _, size = struct.unpack_from("<IHH", data, pos)
        if size < 8:
            raise SystemExit(f"{src}: record of {size} bytes at {pos}")
        if kind == RECORD_SAMPLE:
            last = pos
        pos += size
    if last is None:
        raise SystemExit(f"{src}: no sample")
    struct.pack_into("<Q", data, last + where, nanoseconds)
    open(dst, "wb").write(data)


def manifest_mtime(src, dst, seconds):
    tar_bytes = subprocess.run(["zstd", "-q", "-d", "-c", src], stdout=subprocess.PIPE,
                               check=True).stdout
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tin, \
            tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT) as tout:
        for info in tin.getmembers():
            data = tin.extractfile(info).read() if info.isfile() else None
            if info.name == "MANIFEST":
                lines = data.decode().split("\n")
                lines = [f"mtime {seconds}" if line.startswith("mtime ") else line
                         for line in lines]
                data = "\n".join(lines).encode()
                info.size = len(data)
            tout.addfile(info, io.BytesIO(data) if data is not None else None)
    with open(dst, "wb") as f:
        f.write(subprocess.run(["zstd", "-q", "-c"], input=out.getvalue(),
                               stdout=subprocess.PIPE, check=True).stdout)


def main():
    if sys.argv[1:2] == ["time"] and len(sys.argv) == 3:
        print(time_nanos(sys.argv[2]))
    elif sys.argv[1:2] == ["sample-time"] and len(sys.argv) == 5:
        sample_time(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1:2] == ["manifest-mtime"] and len(sys.argv) == 5:
        manifest_mtime(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)


main()
