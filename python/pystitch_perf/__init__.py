"""pystitch_perf: Python frames in perf profiles of CPython 3.7 to 3.11.

CPython 3.12 and newer, run with ``-X perf``, call every Python function
through a small trampoline of its own and name it in /tmp/perf-PID.map,
so that ``perf`` and ``pystitch`` show Python frames in native stacks.
This package does the same for older interpreters:

    import pystitch_perf
    pystitch_perf.enable()      # from here on, every call gets a named trampoline
    pystitch_perf.disable()     # back to the default frame evaluator
    pystitch_perf.is_enabled()

or ``python -m pystitch_perf script.py args...``, or ``PYSTITCH_PERF=1`` in
the environment (through the installed pystitch_perf.pth). On 3.12+,
enable() raises: use ``-X perf`` there.
"""
from _pystitch_perf import disable, enable, is_enabled

__all__ = ["enable", "disable", "is_enabled"]
