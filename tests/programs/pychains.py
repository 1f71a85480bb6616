"""pychains: a CPython workload with known Python call chains.

Usage: python3 pychains.py SECONDS EXPECTED_FILE [HOLD_FD]

Runs two threads of CPU-bound pure-Python work for about SECONDS of the
process's CPU time: the main thread (nested calls, a C builtin calling back into Python
through sorted(key=lambda) and map(), a generator consumed by a for loop,
a method and a classmethod) and a second threading.Thread with nested
calls of its own.

Every workload function is called from exactly one place, without
recursion, so each has one fixed chain of Python frames. The first round
of each thread records these chains from the interpreter itself, by
walking sys._getframe() up to the root; EXPECTED_FILE receives one line
per function, the chain root first as `py::QUALNAME:FILENAME` joined by
';' (the names CPython writes to its perf maps; co_name before 3.11), and
a line `threads TID...` (the thread ids of both threads) and a line
`window START END`: CLOCK_MONOTONIC nanoseconds between which both threads
are past their first round, so that no other Python code runs (record with
`perf record -k CLOCK_MONOTONIC` to compare sample times). With HOLD_FD,
waits for one byte on that file descriptor before exiting (a test reads
the capture while the process still runs). Prints nothing on stdout.
"""
import os
import sys
import threading
import time

RECORDING = True
CHAINS = {}
STOP = []
THREADS = []


def frame_name(frame):
    code = frame.f_code
    return "py::%s:%s" % (getattr(code, "co_qualname", code.co_name), code.co_filename)


def rec(depth=1):
    """Records the chain of the caller (depth 1) once per code object."""
    frame = sys._getframe(depth)
    if frame.f_code in CHAINS:
        return None
    names = []
    while frame is not None:
        names.append(frame_name(frame))
        frame = frame.f_back
    CHAINS[sys._getframe(depth).f_code] = ";".join(reversed(names))
    return None


# ---- main thread -------------------------------------------------------

class Shape:
    def __init__(self, sides, size):
        if RECORDING:
            rec()
        self.sides = sides
        self.size = size

    @classmethod
    def build(cls, count):
        if RECORDING:
            rec()
        shapes = []
        for i in range(count):
            shapes.append(cls(3 + i % 5, 1.0 + i % 7))
        return shapes

    def area(self):
        if RECORDING:
            rec()
        total = 0.0
        for i in range(400):
            total += (self.size * self.sides + i) % 13
        return total


def numbers(count):
    if RECORDING:
        rec()
    value = 1
    for i in range(count):
        for _ in range(8):
            value = (value * 1103515245 + 12345 + i) % 2147483648
        yield value


def scale(value):
    if RECORDING:
        rec()
    acc = value
    for i in range(40):
        acc = (acc * 31 + i) % 65521
    return acc


def leaf_loop(count):
    if RECORDING:
        rec()
    acc = 0
    for i in range(count):
        acc = (acc + i * i) % 1000003
    return acc


def stage_c(count):
    if RECORDING:
        rec()
    return leaf_loop(count)


def stage_b(count):
    if RECORDING:
        rec()
    return stage_c(count) + 1


def stage_a(count):
    if RECORDING:
        rec()
    return stage_b(count) + 1


def sort_step(count):
    if RECORDING:
        rec()
    values = []
    for i in range(count):
        values.append((i * 7919) % 10007)
    ordered = sorted(values, key=lambda v: (RECORDING and rec()) or
                     ((v * 3) % 97 + (v * 5) % 89 + (v * 7) % 83) * 10007 + v)
    return ordered[0]


def map_step(count):
    if RECORDING:
        rec()
    return sum(map(scale, range(count)))


def generator_step(count):
    if RECORDING:
        rec()
    total = 0
    for value in numbers(count):
        total += value % 7
    return total


def shape_step(count):
    if RECORDING:
        rec()
    total = 0.0
    for shape in Shape.build(count):
        total += shape.area()
    return total


def main_round():
    if RECORDING:
        rec()
    total = stage_a(40000)
    total += sort_step(4000)
    total += map_step(800)
    total += generator_step(1500)
    total += shape_step(60)
    return total


# ---- second thread -----------------------------------------------------

def worker_leaf(count):
    if RECORDING:
        rec()
    acc = 1
    for i in range(count):
        acc = (acc * 7 + i) % 999983
    return acc


def worker_middle(count):
    if RECORDING:
        rec()
    return worker_leaf(count) + 1


def worker_outer(count):
    if RECORDING:
        rec()
    return worker_middle(count) + 1


def worker_round():
    if RECORDING:
        rec()
    return worker_outer(30000)


def worker_main(ready):
    if RECORDING:
        rec()
    THREADS.append(threading.get_native_id())
    worker_round()
    ready.set()
    while not STOP:
        worker_round()


# ---- driver ------------------------------------------------------------

def main():
    global RECORDING
    if RECORDING:
        rec()
    seconds = float(sys.argv[1])
    expected = sys.argv[2]
    THREADS.append(threading.get_native_id())
    ready = threading.Event()
    worker = threading.Thread(target=worker_main, args=(ready,), name="pychains-worker")
    worker.start()
    main_round()
    ready.wait()
    RECORDING = False
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    # SECONDS of the process's CPU time, not of the clock: a busy machine
    # then gives the same number of samples as a quiet one
    deadline = time.process_time_ns() + int(seconds * 1e9)
    while time.process_time_ns() < deadline:
        main_round()
    end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    STOP.append(True)
    worker.join()
    with open(expected, "w") as out:
        for chain in sorted(CHAINS.values()):
            out.write(chain + "\n")
        out.write("threads %s\n" % " ".join(str(tid) for tid in THREADS))
        out.write("window %d %d\n" % (start, end))
    if len(sys.argv) > 3:
        os.read(int(sys.argv[3]), 1)


if __name__ == "__main__":
    if RECORDING:
        rec()
    main()
