"""pystitch_perf: Python frames and their lines in perf profiles of CPython.

CPython 3.12 and newer, run with ``-X perf``, call every Python function
through a small trampoline of its own and name it in /tmp/perf-PID.map,
so that ``perf`` and ``pystitch`` show Python frames in native stacks.
This package does the same for 3.7 to 3.11:

    import pystitch_perf
    pystitch_perf.enable()      # from here on, every call gets a named trampoline
    pystitch_perf.disable()     # back to the default frame evaluator
    pystitch_perf.is_enabled()

or ``python -m pystitch_perf script.py args...``, or ``PYSTITCH_PERF=1`` in
the environment (through the installed pystitch_perf.pth). On every
version it also writes /tmp/perf-PID.pylines, the code objects' line
tables that give pystitch each Python frame's line; on 3.12+ that is what
it adds to CPython's own trampolines (``python -X perf -m pystitch_perf``;
enable() turns them on when they are off). ``enable(lines=False)`` or
PYSTITCH_PERF_LINES=0 leaves the side file out.
"""
from _pystitch_perf import disable, enable, is_enabled

__all__ = ["enable", "disable", "is_enabled"]
