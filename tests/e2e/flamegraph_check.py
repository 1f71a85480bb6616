"""flamegraph_check.py: reads an SVG written by `pystitch flamegraph` and
prints the folded stacks it draws, for flamegraph.sh to compare with
`pystitch collapse` on the same capture.

Usage: python3 flamegraph_check.py [--total N] [--python] [--icicle]
       [--min-width PX] SVG

Every frame is a <rect> in the group "frames" with data-n (its name) and
data-w (its weight), in depth-first order, followed by a <text> when its
name fits. Its depth (the root 0) is its row: |y - the root's y| over the
<svg>'s data-row-height. Its offset (the weight to its left) is its data-o
where it has one, else where the frames before it put it: at its caller's
offset for a caller's first callee, else at the end of the previous frame
at its depth. A frame's own weight is its weight less its
callees'; each frame with some prints "root;...;frame WEIGHT" (without the
root "all"; ';' in names becomes ':' as in collapse). Checks on the way,
each failure a line on stderr and exit status 1:
  - the document is well-formed XML with the search control and script;
  - callees lie inside their caller, one level deeper, without overlap;
  - each frame is drawn where its offset puts it (x, to 0.1 px);
  - --total N: the root's weight is N;
  - --python: there are py:: frames, all of class "py" and drawn green;
  - --icicle: the root is drawn on top (else at the bottom);
  - --min-width PX: no frame is narrower than PX pixels.
"""
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(message):
    sys.stderr.write("flamegraph_check: %s\n" % message)
    global failed
    failed = True


failed = False


def main(argv):
    total = python = icicle = None
    min_width = None
    args = list(argv[1:])
    while args and args[0].startswith("--"):
        option = args.pop(0)
        if option == "--total":
            total = int(args.pop(0))
        elif option == "--python":
            python = True
        elif option == "--icicle":
            icicle = True
        elif option == "--min-width":
            min_width = float(args.pop(0))
        else:
            sys.exit("flamegraph_check: unknown option " + option)
    if len(args) != 1:
        sys.exit(__doc__)
    root = ET.parse(args[0]).getroot()
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    for wanted in ("frames", "search", "matched", "reset", "details"):
        if wanted not in ids:
            fail("no element with id %s" % wanted)
    if root.find(SVG + "script") is None or "search" not in (root.find(SVG + "script").text or ""):
        fail("no script")
    group = next(e for e in root.iter(SVG + "g") if e.get("id") == "frames")
    path = []  # [name, depth, offset, weight, callees' weight, end of last callee]
    folded = {}
    nr_frames = py_frames = 0
    root_y = other_y = None
    row_height = float(root.get("data-row-height") or 0)
    if row_height <= 0:
        fail("no data-row-height on the <svg>")
        row_height = 1
    next_offset = [0]  # where the next frame at each depth starts
    pad_x = float(root.get("data-pad-x") or 0)
    graph_width = float(root.get("data-graph-width") or 0)
    root_weight = 0

    def leave(level):
        while len(path) > level:
            name, _, _, weight, callees, _ = path.pop()
            if callees > weight:
                fail("%s: callees weigh %d, more than the frame's %d" % (name, callees, weight))
            if weight > callees and path:
                key = ";".join(p[0] for p in path[1:]) + (";" if len(path) > 1 else "") + name
                folded[key] = folded.get(key, 0) + weight - callees

    children = list(group)
    for index, rect in enumerate(children):
        if rect.tag != SVG + "rect":
            if rect.tag != SVG + "text" or index == 0 or children[index - 1].tag != SVG + "rect":
                fail("a %s in the frames, not after a frame" % rect.tag)
            continue
        nr_frames += 1
        y = float(rect.get("y"))
        if nr_frames == 1:
            root_y = y
        depth = int(round(abs(y - root_y) / row_height))
        weight, name = int(rect.get("data-w")), rect.get("data-n").replace(";", ":")
        if rect.get("data-o") is not None:
            offset = int(rect.get("data-o"))
        elif depth < len(next_offset):
            offset = next_offset[depth]
        else:
            fail("%s at depth %d has no data-o and no caller" % (name, depth))
            continue
        del next_offset[depth:]
        next_offset += [0] * (depth - len(next_offset)) + [offset + weight, offset]
        # the offset decoded is where the frame is drawn (x to 0.1 px)
        if nr_frames == 1:
            root_weight = weight
        expected_x = pad_x + (offset * graph_width / root_weight if root_weight else 0)
        if abs(float(rect.get("x")) - expected_x) > 0.051:
            fail("%s: drawn at x %s, its offset %d says %.2f" %
                 (name, rect.get("x"), offset, expected_x))
        if depth > len(path):
            fail("%s at depth %d below a frame at depth %d" % (name, depth, len(path) - 1))
            continue
        leave(depth)
        if depth:
            parent = path[-1]
            if offset < parent[5] or offset + weight > parent[2] + parent[3]:
                fail("%s [%d, +%d) outside its caller %s or overlapping a sibling" %
                     (name, offset, weight, parent[0]))
            parent[4] += weight
            parent[5] = offset + weight
        elif nr_frames != 1 or name != "all":
            fail("the first frame is %s, not the root all" % name)
        path.append([name, depth, offset, weight, 0, offset])
        width = float(rect.get("width"))
        if min_width is not None and depth and width < min_width:
            fail("%s is %.2f px wide, narrower than %g" % (name, width, min_width))
        if depth and other_y is None:
            other_y = y
        if name.startswith("py::"):
            py_frames += 1
            fill = rect.get("fill")
            r, gr, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
            if "py" not in rect.get("class").split() or not (gr > r and gr > b):
                fail("%s: class %s, fill %s (class py and green expected)" %
                     (name, rect.get("class"), fill))
    leave(0)
    if nr_frames == 0:
        fail("no frames")
    root_weight = int(group.find(SVG + "rect").get("data-w")) if nr_frames else 0
    if total is not None and root_weight != total:
        fail("the root weighs %d, not %d" % (root_weight, total))
    if python and not py_frames:
        fail("no py:: frame")
    if root_y is not None and other_y is not None:
        if icicle and not root_y < other_y:
            fail("--icicle: the root (y %g) is not above its callees (y %g)" % (root_y, other_y))
        if not icicle and not root_y > other_y:
            fail("the root (y %g) is not below its callees (y %g)" % (root_y, other_y))
    for key in sorted(folded):
        sys.stdout.write("%s %d\n" % (key, folded[key]))
    sys.stderr.write("flamegraph_check: %d frames, %d Python, root %d\n" %
                     (nr_frames, py_frames, root_weight))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
