"""Checks the lines of the Python frames of tests/programs/pylines.py in
`pystitch script -F +srcline` output.

Usage: python3 pylines_check.py WORKLOAD SCRIPT_OUTPUT [--min-lined PCT]
           [--min-right PCT] [--label TEXT]

WORKLOAD is pylines.py itself: its "# call: NAME..." comments say which
functions each line calls, its "# hot" comments which lines are the hot
loops of its leaf functions. Each sample's Python frames of the workload
are checked, leaf to root:
  - a frame that calls another (the next frame leafward) must show a line
    that calls that function;
  - the leaf-most frame of a leaf function must show a line of its hot
    loop; of another function, a line of that function.
A Python frame prints as `py::QUALNAME:FILE`, followed with -F +srcline by
`  BASENAME:LINE` when it has a line. Prints one summary line:
  LABEL: N Python frames, L with a line (x%), R of them right (y%)
and the first wrong frames; exits 1 when the share with a line is below
--min-lined or the share right below --min-right (percent), or when
there are fewer than 100 frames.
"""
import argparse
import ast
import os
import re
import sys

FRAME = re.compile(r"^\s*[0-9a-f]+ (.*)\+0x[0-9a-f]+ \((.*)\)$")
SRCLINE = re.compile(r"^  (\S+):(\d+)$")


def workload_facts(path):
    """Per function (short name): its line range; the lines calling each
    callee; the hot lines of leaf functions."""
    with open(path) as f:
        source = f.read()
    lines = source.splitlines()
    tree = ast.parse(source)
    ranges = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = max(getattr(n, "lineno", node.lineno) for n in ast.walk(node))
            ranges[node.name] = (node.lineno, end)
    ranges["<module>"] = (1, len(lines))
    calls, hot = {}, {}
    for number, text in enumerate(lines, 1):
        owner = owner_of(ranges, number)
        match = re.search(r"# call: (.*)$", text)
        if match:
            for callee in match.group(1).split():
                calls.setdefault((owner, callee), set()).add(number)
                if callee == "<listcomp>":
                    ranges["<listcomp>"] = (number, number)
        if re.search(r"# hot\b", text):
            hot.setdefault(owner, set()).add(number)
    # the comprehension's own frame (before 3.12) calls from its line
    for (owner, callee), numbers in list(calls.items()):
        if "<listcomp>" in ranges and ranges["<listcomp>"][0] in numbers and callee != "<listcomp>":
            calls.setdefault(("<listcomp>", callee), set()).update(numbers)
    return ranges, calls, hot


def owner_of(ranges, number):
    """The innermost function whose lines hold number."""
    best = "<module>"
    for name, (first, last) in ranges.items():
        if name in ("<module>", "<listcomp>"):
            continue
        if first <= number <= last and (best == "<module>" or first > ranges[best][0]):
            best = name
    return best


def short_name(qualname):
    return qualname.rsplit(".", 1)[-1]


def samples(path):
    """Each sample's frames: (symbol, srcline or None), leaf first."""
    frames = []
    with open(path, errors="replace") as f:
        for text in f:
            text = text.rstrip("\n")
            if not text:
                if frames:
                    yield frames
                frames = []
                continue
            match = FRAME.match(text)
            if match:
                frames.append([match.group(1), None])
                continue
            match = SRCLINE.match(text)
            if match and frames:
                frames[-1][1] = (match.group(1), int(match.group(2)))
    if frames:
        yield frames


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("output")
    parser.add_argument("--min-lined", type=float, default=0.0)
    parser.add_argument("--min-right", type=float, default=0.0)
    parser.add_argument("--label", default="pylines")
    args = parser.parse_args()
    ranges, calls, hot = workload_facts(args.workload)
    base = os.path.basename(args.workload)
    total = lined = right = 0
    wrong = []
    for frames in samples(args.output):
        python = []
        for symbol, srcline in frames:
            if not symbol.startswith("py::"):
                continue
            qualname, _, filename = symbol[4:].partition(":")
            python.append((short_name(qualname), filename, srcline))
        for k, (name, filename, srcline) in enumerate(python):
            if os.path.basename(filename) != base:
                continue
            if k == 0:
                if name in hot:
                    expected = hot[name]
                elif name in ranges:
                    first, last = ranges[name]
                    expected = set(range(first, last + 1))
                else:
                    continue
                what = "leaf %s" % name
            else:
                callee, callee_file, _ = python[k - 1]
                if os.path.basename(callee_file) != base:
                    continue
                expected = calls.get((name, callee))
                if expected is None:
                    continue  # a call the workload does not annotate
                what = "%s -> %s" % (name, callee)
            total += 1
            if srcline is None or srcline[0] != base:
                continue
            lined += 1
            if srcline[1] in expected:
                right += 1
            elif len(wrong) < 10:
                wrong.append("%s: line %d, expected %s" % (what, srcline[1], sorted(expected)))
    share_lined = 100.0 * lined / total if total else 0.0
    share_right = 100.0 * right / lined if lined else 0.0
    print("%s: %d Python frames, %d with a line (%.2f%%), %d of them right (%.2f%%)"
          % (args.label, total, lined, share_lined, right, share_right))
    for text in wrong:
        print("  wrong: " + text)
    if total < 100:
        print("%s: too few Python frames of the workload" % args.label)
        return 1
    if share_lined < args.min_lined or share_right < args.min_right:
        print("%s: below %.1f%% with a line or %.1f%% right" % (args.label, args.min_lined, args.min_right))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
