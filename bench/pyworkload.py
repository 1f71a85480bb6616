"""The CPU-bound CPython workload of the benchmarks: recursion, dicts,
strings, sorting with a key function, regular expressions, json and
methods, so that stacks go through the interpreter loop, the object code
and a few extension modules.

usage: pyworkload.py --seconds S      run for S seconds of CPU time
       pyworkload.py --rounds N       run N rounds
       [--remove-perf-map]            delete /tmp/perf-PID.map (and the side
                                      file perf-PID.pylines) at the end
                                      (timing runs that need no profile)
"""
import json
import os
import re
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(n):
    return {"w%d" % i: i * i for i in range(n)}


def text_work(d):
    s = " ".join(sorted(d, key=lambda k: d[k] % 97))
    return len(re.findall(r"w\d+7\b", s))


def json_work(d):
    return len(json.loads(json.dumps(d)))


class Node:
    def __init__(self, v, kids):
        self.v, self.kids = v, kids

    def total(self):
        return self.v + sum(k.total() for k in self.kids)


def tree(depth):
    return Node(depth, [tree(depth - 1) for _ in range(3)] if depth else [])


def one_round():
    acc = fib(18)
    d = words(2000)
    acc += text_work(d) + json_work(d)
    return acc + tree(6).total()


def main(argv):
    if len(argv) < 3 or argv[1] not in ("--seconds", "--rounds"):
        sys.exit(__doc__)
    acc = 0
    if argv[1] == "--seconds":
        end = time.process_time() + float(argv[2])
        while time.process_time() < end:
            acc += one_round()
    else:
        for _ in range(int(argv[2])):
            acc += one_round()
    if "--remove-perf-map" in argv[3:]:
        for path in ("/tmp/perf-%d.map", "/tmp/perf-%d.pylines"):
            if os.path.exists(path % os.getpid()):
                os.unlink(path % os.getpid())
    return 0 if acc else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
