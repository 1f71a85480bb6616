"""python -m pystitch_perf [-m MODULE | SCRIPT] [ARGS...]

Runs SCRIPT (or MODULE, as python -m does) as __main__ with pystitch_perf
enabled, sys.argv set to what the program would get if run directly.
The few frames of this launcher below the program have no trampoline:
Python frames are named from the program's own <module> frame up. To name
every frame, set PYSTITCH_PERF=1 instead (needs the installed .pth).
"""
import os
import runpy
import sys

import _pystitch_perf

USAGE = "usage: python -m pystitch_perf [-m MODULE | SCRIPT] [ARGS...]\n"


def enable():
    try:
        _pystitch_perf.enable()
    except (RuntimeError, OSError) as error:  # another evaluator, no map or side file
        sys.stderr.write("pystitch_perf: %s\n" % error)
        sys.exit(1)


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write(USAGE)
        return 0 if args else 2
    if args[0] == "--":
        args = args[1:]
    if args[:1] == ["-m"]:
        if len(args) < 2:
            sys.stderr.write(USAGE)
            return 2
        module = args[1]
        sys.argv = [module] + args[2:]  # run_module puts the file name in argv[0]
        enable()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = args[0]
        sys.argv = args
        # as `python SCRIPT`: the script's directory first on sys.path, not ours
        sys.path[0] = os.path.dirname(os.path.realpath(script))
        enable()
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
