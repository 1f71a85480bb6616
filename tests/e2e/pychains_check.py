#!/usr/bin/env python3
"""pychains_check: checks the Python call chains in `pystitch script` output
of a capture of tests/programs/pychains.py against the chains the workload
recorded from the interpreter itself.

Usage: pychains_check.py [--min PCT] [--min-samples N] [--pid PID]
                         [--comm COMM] [--label L] [--only] [--suffix] [--ends]
                         EXPECTED [OUTPUT]

EXPECTED is the file pychains.py wrote: one chain per line (Python frames
root first, `py::QUALNAME:FILENAME` joined by ';'), a line `threads TID...`
and a line `window START END` (CLOCK_MONOTONIC nanoseconds). OUTPUT is the
`perf script` text to check (default: stdin), recorded with
`perf record -k CLOCK_MONOTONIC`.

Only samples of the workload's threads (the `threads` line; --pid and
--comm narrow further) whose time is inside the window count. A sample is
correct when its Python frames (symbols starting with `py::`, an offset
`+0x..` dropped, and the `[python: unnamed]` markers of Python code no
trampoline names), reversed to root first and joined by ';', are exactly
one of the expected chains (EXPECTED may hold markers too); a sample
without Python frames, or cut off (a `[truncated]` frame), is wrong. Prints
  [LABEL: ]chains: CORRECT/TOTAL (PCT%) truncated=N no_python=N unwound=N (PCT%)
where unwound counts the samples whose root-most frame is _start or clone3
(or clone): meaningful with --python=all. --only also requires that every
frame is a Python frame. --suffix takes a chain whose root end is missing
(the leaf end of an expected chain, at least one frame: a process whose
perf trampolines were turned on while it ran names only the frames
entered since), below any number of `[python: unnamed]` markers of the
activations that were running before. --ends counts, and fails on, the samples whose
stack neither ends where a process or thread starts (_start,
__libc_start_call_main, start_thread, clone3, ld.so's _dl_start_user, ...)
nor is marked `[truncated]`: a stack cut short passed off as whole
(`unmarked=N` is added to the line). --cut-apart PERF counts apart the
samples that PERF (perf script's output of the same capture) shows
without any Python frame: a `perf record -g` walk that broke in the
leaf's library (built without frame pointers) before any Python frame, so
the capture holds no chain at all. They leave TOTAL, are added as
`cut_apart=N (PCT%)`, and fail the check when more than --max-cut
(default 5) percent of the samples are. Shows up to 5 wrong samples on stderr. Exit
status 1 when fewer than --min (default 99) percent are correct, or
fewer than --min-samples (default 1) samples count; 2 on bad input.
"""
import argparse
import re
import sys

HEADER = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[(\d+)\]\s+)?(\d+)\.(\d+):")
FRAME = re.compile(r"^\t\s*([0-9a-f]+) (.*) \((.*)\)$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")
UNNAMED = "[python: unnamed]"
ROOTS = ("_start", "clone3", "clone", "__clone3", "__clone")
THREAD_ROOTS = ROOTS + ("__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
                        "start_thread", "_dl_start_user", "_dl_start")


def fail(message):
    sys.stderr.write("pychains_check: %s\n" % message)
    sys.exit(2)


def read_expected(path):
    chains, threads, window = set(), None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("window "):
                start, end = line.split()[1:3]
                window = (int(start), int(end))
            elif line.startswith("threads "):
                threads = set(int(t) for t in line.split()[1:])
            elif line.startswith("py::") or line.startswith(UNNAMED):
                chains.add(line)
            elif line:
                fail("%s: unexpected line %r" % (path, line))
    if not chains or window is None:
        fail("%s: no chains or no window line (did the workload finish?)" % path)
    return chains, threads, window


def samples(lines):
    """Yields (header, frame lines) per sample; other lines are skipped."""
    header, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("\t"):
            if header is not None:
                frames.append(line)
        elif line.startswith("  ") and header is not None:
            continue  # srcline
        else:
            if header is not None:
                yield header, frames
            header, frames = (line if line else None), []
    if header is not None:
        yield header, frames


def sample_ns(match):
    fraction = match.group(6)
    return int(match.group(5)) * 1000000000 + int((fraction + "000000000")[:9]), \
        10 ** (9 - min(len(fraction), 9))


def header_time(match):
    return match.group(5) + "." + match.group(6)


def cut_without_python(path):
    """(tid, time) of the samples of perf script's output that hold no
    Python frame."""
    keys = set()
    try:
        f = open(path)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    with f:
        for header, frames in samples(f):
            match = HEADER.match(header)
            if not match:
                continue
            symbols = [FRAME.match(line).group(2) for line in frames if FRAME.match(line)]
            if not any(s.startswith("py::") for s in symbols):
                second = match.group(3)
                keys.add((int(second) if second else int(match.group(2)), header_time(match)))
    return keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min", type=float, default=99.0)
    parser.add_argument("--min-samples", type=int, default=1)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--comm")
    parser.add_argument("--label", default="")
    parser.add_argument("--only", action="store_true")
    parser.add_argument("--suffix", action="store_true")
    parser.add_argument("--ends", action="store_true")
    parser.add_argument("--cut-apart")
    parser.add_argument("--max-cut", type=float, default=5.0)
    parser.add_argument("expected")
    parser.add_argument("output", nargs="?")
    args = parser.parse_args()

    chains, threads, (start, end) = read_expected(args.expected)
    if args.suffix:
        chains = set(";".join(c.split(";")[i:]) for c in chains for i in range(len(c.split(";"))))
    apart_keys = cut_without_python(args.cut_apart) if args.cut_apart else set()
    total = correct = truncated = no_python = unwound = unparsed = unmarked = apart = 0
    wrong = []
    source = open(args.output) if args.output else sys.stdin
    with source:
        for header, frames in samples(source):
            match = HEADER.match(header)
            if not match:
                unparsed += 1
                continue
            comm, first, second = match.group(1), int(match.group(2)), match.group(3)
            tid = int(second) if second else first
            pid = first if second else None
            if threads is not None and tid not in threads:
                continue
            if args.pid is not None and pid is not None and pid != args.pid:
                continue
            if args.comm is not None and comm != args.comm:
                continue
            time_ns, resolution = sample_ns(match)
            if time_ns < start or time_ns + resolution > end:
                continue
            if (tid, header_time(match)) in apart_keys:
                apart += 1
                continue
            total += 1
            python, cut, root, other = [], False, None, False
            for line in frames:
                frame = FRAME.match(line)
                if not frame:
                    fail("cannot parse the frame line %r" % line)
                symbol = frame.group(2)
                if symbol == "[truncated]":
                    cut = True
                    continue
                if symbol.startswith("py::"):
                    python.append(OFFSET.sub("", symbol))
                elif symbol == UNNAMED:
                    python.append(symbol)
                else:
                    other = True
                root = OFFSET.sub("", symbol)
            if root in ROOTS:
                unwound += 1
            if args.ends and not cut and root not in THREAD_ROOTS:
                unmarked += 1
                if len(wrong) < 5:
                    wrong.append(("ends neither at a thread's root nor marked cut", header,
                                  frames))
            python.reverse()  # root first
            if args.suffix:
                # the activations already running when the trampolines
                # were turned on: unnamed, at the root end only
                while len(python) > 1 and python[0] == UNNAMED:
                    python.pop(0)
            chain = ";".join(python)
            if cut:
                truncated += 1
                reason = "cut off by the stack-copy limit"
            elif not python:
                no_python += 1
                reason = "no Python frame"
            elif chain not in chains:
                reason = "not an expected chain"
            elif args.only and other:
                reason = "a frame that is not a Python frame (--only)"
            else:
                correct += 1
                continue
            if len(wrong) < 5:
                wrong.append((reason, header, frames))

    if unparsed and not total:
        fail("%d sample headers not understood, none counted" % unparsed)
    percent = 100.0 * correct / total if total else 0.0
    shown = "%.2f" % percent
    if correct < total and shown == "100.00":
        shown = "99.99"
    label = args.label + ": " if args.label else ""
    apart_percent = 100.0 * apart / (total + apart) if total + apart else 0.0
    print("%schains: %d/%d (%s%%) truncated=%d no_python=%d unwound=%d (%.2f%%)%s%s" % (
        label, correct, total, shown, truncated, no_python, unwound,
        100.0 * unwound / total if total else 0.0,
        " unmarked=%d" % unmarked if args.ends else "",
        " cut_apart=%d (%.2f%%)" % (apart, apart_percent) if args.cut_apart else ""))
    for reason, header, frames in wrong:
        sys.stderr.write("%swrong sample (%s):\n%s\n" % (label, reason, header))
        for line in frames[:40]:
            sys.stderr.write(line + "\n")
        if len(frames) > 40:
            sys.stderr.write("\t... (%d more frames)\n" % (len(frames) - 40))
    if total < max(args.min_samples, 1):
        sys.stderr.write("%s%d samples of the workload inside its window, fewer than %d\n" % (
            label, total, max(args.min_samples, 1)))
        return 1
    if apart_percent > args.max_cut:
        sys.stderr.write("%s%d samples (%.2f%%) cut with no Python frame, more than %g%%\n" % (
            label, apart, apart_percent, args.max_cut))
        return 1
    return 1 if percent < args.min or unmarked else 0


if __name__ == "__main__":
    sys.exit(main())
