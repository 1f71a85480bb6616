"""pysubinterp: Python code run in a sub-interpreter (CPython 3.12+).

Usage: python3 -X perf pysubinterp.py SECONDS [activate]. main() runs
sub_work() in a new sub-interpreter for SECONDS of CPU time, then
main_work() in the main interpreter for as long. CPython turns its perf
trampolines on in the main interpreter only (pylifecycle.c, is_main_interp):
with "activate" the sub-interpreter turns them on for itself with
sys.activate_stack_trampoline("perf"), so that its functions get names.
Prints nothing.
"""
import sys
import time

SUB_CODE = """
import sys
import time
if %(activate)r:
    sys.activate_stack_trampoline("perf")


def sub_leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def sub_work(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        sub_leaf(2000)


sub_work(%(seconds)r)
"""


def run_in_subinterpreter(code):
    """The interface each version has: concurrent.interpreters (3.14),
    _interpreters (3.13), _xxsubinterpreters (3.12)."""
    try:
        from concurrent import interpreters
    except ImportError:
        interpreters = None
    if interpreters is not None:
        interp = interpreters.create()
        interp.exec(code)
        interp.close()
        return
    try:
        import _interpreters as low
    except ImportError:
        import _xxsubinterpreters as low
    interp = low.create()
    run = getattr(low, "exec", None) or low.run_string
    failed = run(interp, code)
    if failed:
        raise RuntimeError("the sub-interpreter failed: %r" % (failed,))
    low.destroy(interp)


def main_leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s


def main_work(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        main_leaf(2000)


def main():
    seconds = float(sys.argv[1])
    activate = len(sys.argv) > 2 and sys.argv[2] == "activate"
    run_in_subinterpreter(SUB_CODE % {"activate": activate, "seconds": seconds})
    main_work(seconds)


main()
