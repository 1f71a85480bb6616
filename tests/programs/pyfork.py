"""pyfork: a process that forks, then parent and child each run a function
of their own, first called after the fork (so each gives it a trampoline
of its own after the fork). Usage: python3 pyfork.py SECONDS. Prints the
child's pid."""
import os
import sys
import time


# The loops are in the two functions themselves, not in a shared helper,
# so that even perf's view (the leaf-most Python frame only) tells them
# apart.
def in_parent(seconds):
    end = time.process_time() + seconds
    total = 0
    while time.process_time() < end:
        for i in range(1000):
            total += i * i
    return total


def in_child(seconds):
    end = time.process_time() + seconds
    total = 0
    while time.process_time() < end:
        for i in range(1000):
            total += i * i
    return total


def main():
    seconds = float(sys.argv[1])
    pid = os.fork()
    if pid == 0:
        in_child(seconds)
        os._exit(0)
    print(pid, flush=True)
    in_parent(seconds)
    os.waitpid(pid, 0)


main()
