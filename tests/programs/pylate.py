"""pylate: CPython's perf trampolines turned on and off while the program
runs (3.12+: sys.activate_stack_trampoline("perf") and
sys.deactivate_stack_trampoline()), for a process started without -X perf.

Usage: python3 pylate.py SECONDS EXPECTED [GO_FILE]

main() runs three phases of about SECONDS of the process's CPU time each,
in one thread: "before" (no trampolines), "active" (main() has turned them
on: every call made from then on goes through a trampoline that the perf
map names; <module> and main(), already running, have none) and "after"
(main() has turned them off: calls run inside the activation of the eval
loop that called them, as before). Each phase runs nested calls and a C
builtin calling back into Python (sorted(key=...)).

The first round of each phase records, for each function, the chain of
Python frames a merged stack should show, root first: `py::QUALNAME:FILE`
for a frame called through a trampoline, and `[python: unnamed]` for each
activation of the eval loop that no trampoline names (a run of unnamed
frames called from Python is one activation; <module> and a function a C
builtin calls start one each). EXPECTED.before, EXPECTED.active and
EXPECTED.after receive these chains in pychains_check.py's format, with a
line `threads TID` and a line `window START END` (CLOCK_MONOTONIC
nanoseconds of that phase, after its first round). With GO_FILE, waits
until that file exists before starting (for `perf record -p` to attach
first; at most 60 s). Prints nothing on stdout.
"""
import os
import sys
import threading
import time

UNNAMED = "[python: unnamed]"
PHASE = None  # the phase whose chains are being recorded, or None
CHAINS = {}
RUNNING_AT_ACTIVATION = set()
ACTIVE = False


def frame_name(frame):
    code = frame.f_code
    return "py::%s:%s" % (code.co_qualname, code.co_filename)


def rec():
    """Records the chain of its caller, once per phase and code object
    (called only while PHASE is set: the call would be sampled too)."""
    frame = sys._getframe(1)
    key = (PHASE, frame.f_code)
    if key in CHAINS:
        return
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    chain = []
    for frame in reversed(frames):
        if ACTIVE and id(frame) not in RUNNING_AT_ACTIVATION:
            chain.append(frame_name(frame))
        elif (frame.f_back is None or frame.f_code in CALLED_FROM_C or
              not chain or chain[-1] != UNNAMED):
            chain.append(UNNAMED)
    CHAINS[key] = ";".join(chain)


def leaf(count):
    if PHASE:
        rec()
    acc = 0
    for i in range(count):
        acc = (acc + i * i) % 1000003
    return acc


def middle(count):
    if PHASE:
        rec()
    return leaf(count) + 1


def sort_key(value):
    if PHASE:
        rec()
    return ((value * 3) % 97 + (value * 5) % 89 + (value * 7) % 83) * 10007 + value


def sorter(count):
    if PHASE:
        rec()
    return sorted(range(count), key=sort_key)[0]


CALLED_FROM_C = {sort_key.__code__}


def phase_round():
    if PHASE:
        rec()
    return middle(20000) + sorter(3000)


def run_phase(name, seconds, windows):
    global PHASE
    PHASE = name
    rec()
    phase_round()
    PHASE = None
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    deadline = time.process_time_ns() + int(seconds * 1e9)
    while time.process_time_ns() < deadline:
        phase_round()
    windows[name] = (start, time.clock_gettime_ns(time.CLOCK_MONOTONIC))


def main():
    global ACTIVE
    seconds = float(sys.argv[1])
    expected = sys.argv[2]
    if len(sys.argv) > 3:
        give_up = time.monotonic() + 60
        while not os.path.exists(sys.argv[3]):
            if time.monotonic() > give_up:
                sys.exit("pylate: %s did not appear within 60 s" % sys.argv[3])
            time.sleep(0.01)
    windows = {}
    run_phase("before", seconds, windows)
    frame = sys._getframe()
    while frame is not None:
        RUNNING_AT_ACTIVATION.add(id(frame))
        frame = frame.f_back
    sys.activate_stack_trampoline("perf")
    ACTIVE = True
    run_phase("active", seconds, windows)
    sys.deactivate_stack_trampoline()
    ACTIVE = False
    run_phase("after", seconds, windows)
    for name in ("before", "active", "after"):
        with open("%s.%s" % (expected, name), "w") as out:
            for chain in sorted(c for (p, _), c in CHAINS.items() if p == name):
                out.write(chain + "\n")
            out.write("threads %d\n" % threading.get_native_id())
            out.write("window %d %d\n" % windows[name])


if __name__ == "__main__":
    main()
