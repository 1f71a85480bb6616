"""Build hostile variants of a good pystitch archive for tests/e2e/archive.sh.

usage: archive_hostile.py GOOD.pst OUTDIR ABSOLUTE_NAME

Reads the archive's tar stream (through the zstd program), then writes
OUTDIR/LABEL.pst for each attack, compressed with zstd again:
  traversal  an extra member "../evil" (each extra member comes right
             after the manifest)
  absolute   an extra member named ABSOLUTE_NAME (an absolute path)
  symlink    the perf.data member replaced by a symbolic link of that name
  oversized  the perf.data member with more bytes than the manifest says
  digest     the perf.data member with one byte changed (same size)
  unlisted   an extra member whose name is a digest the manifest lacks
  truncated  the good archive cut in half
  damaged    a member's tar header with a wrong checksum
  unrecognized  zstd data that holds no tar
  names      (only when the archive has a "names" member) that member
             replaced by a damaged table, its manifest line fixed to
             match, so only the table's own checks can catch it
"""
import hashlib
import io
import subprocess
import sys
import tarfile


def members(tar_bytes):
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
        for info in tar.getmembers():
            data = tar.extractfile(info).read() if info.isfile() else b""
            yield info, data


def perf_data_name(manifest):
    for line in manifest.decode().splitlines():
        fields = line.split(" ")
        if fields[0] == "file" and fields[1] == "perf.data":
            return fields[3]
    raise SystemExit("no perf.data in the manifest")


def write(path, entries):
    """entries: (TarInfo, bytes) pairs; written as pax tar, then zstd."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    with open(path, "wb") as out:
        out.write(subprocess.run(["zstd", "-q", "-c"], input=buf.getvalue(),
                                 stdout=subprocess.PIPE, check=True).stdout)


def regular(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    return info, data


def damaged_names(entries):
    """The first "names" member replaced by a table whose second address
    line claims more records than follow; the manifest updated."""
    manifest = entries[0][1].decode()
    lines = manifest.splitlines(keepends=True)
    for i, line in enumerate(lines):
        fields = line.split(" ")
        if fields[0] == "file" and fields[1] == "names":
            old = fields[3]
            bad = (b"pystitch-names 1\ndso -\na 10 0 0 =f\n"
                   b"a 20 3 0 =g\nr 1 =h -\nend\n")
            new = hashlib.sha256(bad).hexdigest()
            fields[2], fields[3] = str(len(bad)), new
            lines[i] = " ".join(fields)
            out = [regular(entries[0][0].name, "".join(lines).encode())]
            for info, data in entries[1:]:
                out.append(regular(new, bad) if info.name == old else (info, data))
            return out
    return None


def main():
    good, outdir, absolute = sys.argv[1:4]
    raw = subprocess.run(["zstd", "-q", "-d", "-c", good], stdout=subprocess.PIPE,
                         check=True).stdout
    entries = list(members(raw))
    target = perf_data_name(entries[0][1])

    def replaced(make):
        return [make(info, data) if info.name == target else (info, data)
                for info, data in entries]

    def symlink(info, data):
        link = tarfile.TarInfo(info.name)
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        return link, b""

    def flipped(info, data):
        return regular(info.name, data[:-1] + bytes([data[-1] ^ 1]))

    def inserted(info_data):
        """right after the manifest, so the reader meets it first"""
        return entries[:1] + [info_data] + entries[1:]

    variants = {
        "traversal": inserted(regular("../evil", b"evil\n")),
        "absolute": inserted(regular(absolute, b"evil\n")),
        "symlink": replaced(symlink),
        "oversized": replaced(lambda info, data: regular(info.name, data + b"\0" * 4096)),
        "digest": replaced(flipped),
        "unlisted": inserted(regular("a" * 64, b"extra\n")),
    }
    names = damaged_names(entries)
    if names:
        variants["names"] = names
    for label, variant in variants.items():
        write(f"{outdir}/{label}.pst", variant)
    with open(good, "rb") as src, open(f"{outdir}/truncated.pst", "wb") as out:
        content = src.read()
        out.write(content[: len(content) // 2])
    # a tar stream whose second header is garbage (libarchive: "Damaged
    # tar archive"), and a zstd stream that holds no tar at all
    # ("Unrecognized archive format"): the message must still name the
    # entry and the offset
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    stream = bytearray(buf.getvalue())
    second = 512 * (1 + (len(entries[0][1]) + 511) // 512)
    # past the manifest's pax header, its header and data
    while stream[second + 156] == ord("x"):
        size = int(stream[second + 124:second + 135].decode().strip("\0 ") or "0", 8)
        second += 512 * (1 + (size + 511) // 512)
    stream[second + 148:second + 156] = b"garbage!"
    for label, payload in (("damaged", bytes(stream)), ("unrecognized", b"\x01" * 4096)):
        with open(f"{outdir}/{label}.pst", "wb") as out:
            out.write(subprocess.run(["zstd", "-q", "-c"], input=payload,
                                     stdout=subprocess.PIPE, check=True).stdout)


if __name__ == "__main__":
    main()
