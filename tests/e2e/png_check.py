"""png_check.py: what flamegraph_browser.sh needs to know about a
screenshot, read with the standard library only.

Usage: python3 png_check.py PNG

Prints "WIDTH HEIGHT COLOURS GREEN" : the image size, the number of
distinct colours, and the number of pixels in the green of Python frames
(green well above red and blue). Exits 1 when the file is not an 8-bit RGB
or RGBA PNG.
"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def main(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("png_check: %s is not a PNG" % path)
    pos, idat, header = 8, b"", None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    if not header:
        sys.exit("png_check: %s has no IHDR" % path)
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        sys.exit("png_check: %s: depth %d colour type %d interlace %d not read here" %
                 (path, depth, colour_type, interlace))
    channels = 3 if colour_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    colours, green = set(), 0
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upleft = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, upleft)) & 255
        for i in range(0, stride, channels):
            r, g, b = line[i], line[i + 1], line[i + 2]
            colours.add((r, g, b))
            if g > r + 40 and g > b + 40:
                green += 1
        previous = line
    print(width, height, len(colours), green)


if __name__ == "__main__":
    main(sys.argv[1])
