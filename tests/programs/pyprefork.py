"""pyprefork: Python workers started the ways servers start them, from a
parent that imported and ran their code first: os.fork() (a pre-forking
server such as gunicorn), and multiprocessing's fork, forkserver and spawn
start methods.

Usage: python3 -X perf pyprefork.py SECONDS OUTDIR [persist]

The parent runs every worker function once (so that their trampolines are
compiled in the parent and named in its perf map), then starts one worker
of each kind, all running at once. Each worker calls shared_work(), which
the parent ran, and own_work(), first called in the worker, for SECONDS of
its CPU time; the first round records the chain of Python frames of each
function, root first, as a merged stack should show it (`py::QUALNAME:FILE`
as CPython names it in its perf map), and the worker writes
OUTDIR/KIND.expected in pychains_check.py's format: the chains, a line
`threads TID` and a line `window START END` (CLOCK_MONOTONIC nanoseconds,
after the first round).

A forked worker keeps the trampolines of the frames it was forked in
(named in the parent's map) and CPython starts a map of its own for the
calls it makes. Spawned workers, and those of the fork server (spawned
too), start without perf support (multiprocessing does not pass -X perf
on): the worker turns it on with sys.activate_stack_trampoline("perf"),
so that the frames already running then (one activation of the eval loop)
stay unnamed, `[python: unnamed]`, and the calls it makes are named.

With "persist" (3.13+), the parent first asks CPython to keep its perf
map across fork (PyUnstable_PerfTrampoline_SetPersistAfterFork, through
ctypes): a forked child then copies the parent's map into its own
(PyUnstable_CopyPerfMapFile) and runs without trampolines, which
os.register_at_fork() turns on again in the child before it runs any
Python code. Prints nothing on stdout.
"""
import multiprocessing
import os
import sys
import threading
import time

RECORDING = False
CHAINS = {}
UNNAMED = "[python: unnamed]"
RUNNING_AT_ACTIVATION = set()


def frame_name(frame):
    code = frame.f_code
    return "py::%s:%s" % (getattr(code, "co_qualname", code.co_name), code.co_filename)


def rec():
    """Records the chain of the caller once per code object: frames that
    were running when the worker turned perf support on are unnamed, one
    marker for each run of them (one activation of the eval loop)."""
    frame = sys._getframe(1)
    if frame.f_code in CHAINS:
        return
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    chain = []
    for frame in reversed(frames):
        if id(frame) not in RUNNING_AT_ACTIVATION:
            chain.append(frame_name(frame))
        elif not chain or chain[-1] != UNNAMED:
            chain.append(UNNAMED)
    CHAINS[sys._getframe(1).f_code] = ";".join(chain)


def activate_here():
    """Turns perf support on in a worker that started without it; the
    frames running now have no trampoline."""
    if sys.is_stack_trampoline_active():
        return
    frame = sys._getframe(1)
    while frame is not None:
        RUNNING_AT_ACTIVATION.add(id(frame))
        frame = frame.f_back
    sys.activate_stack_trampoline("perf")


def activate_after_fork():
    sys.activate_stack_trampoline("perf")


def shared_leaf(count):
    if RECORDING:
        rec()
    acc = 0
    for i in range(count):
        acc = (acc + i * i) % 1000003
    return acc


def shared_work(count):
    if RECORDING:
        rec()
    return shared_leaf(count) + 1


def own_leaf(count):
    if RECORDING:
        rec()
    acc = 1
    for i in range(count):
        acc = (acc * 7 + i) % 999983
    return acc


def own_work(count):
    if RECORDING:
        rec()
    return own_leaf(count) + 1


def worker_round():
    if RECORDING:
        rec()
    return shared_work(20000) + own_work(20000)


def worker_main(kind, seconds, outdir):
    """The worker's whole life: its chains, then SECONDS of rounds."""
    global RECORDING
    activate_here()
    RECORDING = True
    rec()
    worker_round()
    RECORDING = False
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    deadline = time.process_time_ns() + int(seconds * 1e9)
    while time.process_time_ns() < deadline:
        worker_round()
    end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    with open(os.path.join(outdir, kind + ".expected"), "w") as out:
        for chain in sorted(CHAINS.values()):
            out.write(chain + "\n")
        out.write("threads %d\n" % threading.get_native_id())
        out.write("window %d %d\n" % (start, end))


def start_fork_worker(seconds, outdir):
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            worker_main("fork", seconds, outdir)
            status = 0
        finally:
            os._exit(status)
    return pid


def main():
    seconds = float(sys.argv[1])
    outdir = sys.argv[2]
    persist = len(sys.argv) > 3 and sys.argv[3] == "persist"
    if persist:
        import ctypes
        ctypes.pythonapi.PyUnstable_PerfTrampoline_SetPersistAfterFork(1)
        os.register_at_fork(after_in_child=activate_after_fork)
    # the parent runs the workers' code first, as a server imports its
    # application before forking
    worker_round()
    workers = []
    for method in ("fork", "forkserver", "spawn"):
        context = multiprocessing.get_context(method)
        process = context.Process(target=worker_main,
                                  args=("mp-" + method, seconds, outdir))
        process.start()
        workers.append(process)
    pid = start_fork_worker(seconds, outdir)
    for process in workers:
        process.join()
        if process.exitcode != 0:
            sys.exit("pyprefork: a %s worker failed" % process.name)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit("pyprefork: the forked worker failed")


if __name__ == "__main__":
    main()
