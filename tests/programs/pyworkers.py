"""pyworkers: Python processes started by a Python program, for `pystitch
record`: the parent forks two workers with multiprocessing's fork start
method, and starts a second interpreter with subprocess, which forks a
worker of its own (a grandchild of the recorded command). Each of the
three kinds runs a function of its own for SECONDS of CPU time, so the
profile tells them apart by name.

Usage: python3 pyworkers.py SECONDS
"""
import multiprocessing
import subprocess
import sys
import time


def spin(seconds):
    end = time.process_time() + seconds
    total = 0
    while time.process_time() < end:
        for i in range(1000):
            total += i * i
    return total


def forked_worker(seconds):
    spin(seconds)


def grandchild_worker(seconds):
    spin(seconds)


def child_main(seconds):
    worker = multiprocessing.get_context("fork").Process(target=grandchild_worker,
                                                         args=(seconds,))
    worker.start()
    worker.join()
    return worker.exitcode


def main():
    seconds = float(sys.argv[1])
    if sys.argv[2:] == ["--child"]:
        return child_main(seconds)
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=forked_worker, args=(seconds,)) for _ in range(2)]
    for worker in workers:
        worker.start()
    child = subprocess.call([sys.executable, __file__, str(seconds), "--child"])
    for worker in workers:
        worker.join()
    return child or max(worker.exitcode for worker in workers)


if __name__ == "__main__":
    sys.exit(main())
