"""Imported by pystitch_perf.pth at startup when PYSTITCH_PERF is set to
something other than 0: enables pystitch_perf before the program runs,
so every Python frame of it gets its trampoline (like PYTHONPERFSUPPORT=1
on 3.12+, where it turns CPython's own trampolines on) and the side file
of line tables is written (unless PYSTITCH_PERF_LINES=0). A failure is
reported on stderr and the program runs anyway."""
import sys


def _autoenable():
    try:
        import _pystitch_perf
        _pystitch_perf.enable()
    except Exception as error:  # startup must go on
        sys.stderr.write("pystitch_perf: PYSTITCH_PERF is set, but enabling failed: %s\n" % error)


_autoenable()
