"""The CPU-bound CPython workload of the benchmarks: recursion, dicts,
strings, sorting with a key function, regular expressions, json and
methods, so that stacks go through the interpreter loop, the object code
and a few extension modules.

usage: pyworkload.py --seconds S      run for S seconds of CPU time
       pyworkload.py --rounds N       run N rounds
       [--remove-perf-map]            delete /tmp/perf-PID.map (and the side
                                      file perf-PID.pylines) at the end
                                      (timing runs that need no profile)
       [--processes P]                fork P - 1 more processes that run the
                                      same (default 1)
       [--threads T]                  in each process, T - 1 more threads
                                      run generators and nested calls of
                                      their own beside the main one, each
                                      for as many rounds or CPU seconds of
                                      the process (default 1)
       [--pid-file PATH]              append the pid of every process of
                                      the run to PATH, one a line, as each
                                      starts (so that a caller removes the
                                      perf maps of exactly those processes)
"""
import json
import os
import re
import sys
import threading
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


def squares(n):
    for i in range(n):
        yield i * i


def chained(depth, n):
    return sum(squares(n)) if depth == 0 else chained(depth - 1, n) + depth


def thread_round():
    return sum(chained(12, 500) for _ in range(20)) + len(sorted(squares(3000), key=str))


def run(kind, amount, work):
    """work() for amount CPU seconds of the process or amount rounds."""
    acc = 0
    if kind == "--seconds":
        end = time.process_time() + amount
        while time.process_time() < end:
            acc += work()
    else:
        for _ in range(int(amount)):
            acc += work()
    return acc


def option(argv, name, default):
    """The value after name, wherever it is among the arguments."""
    if name not in argv[1:-1]:
        return default
    return argv[argv.index(name, 1) + 1]


def main(argv):
    # first: -X perf wrote this process's map already, even for a usage error
    pid_file = option(argv, "--pid-file", None)
    if pid_file:
        with open(pid_file, "a") as out:
            out.write("%d\n" % os.getpid())
    kinds = [a for a in argv[1:] if a in ("--seconds", "--rounds")]
    if len(kinds) != 1 or option(argv, kinds[0], None) is None:
        sys.exit(__doc__)
    kind, amount = kinds[0], float(option(argv, kinds[0], None))
    processes = int(option(argv, "--processes", 1))
    threads = int(option(argv, "--threads", 1))
    children = []
    for _ in range(processes - 1):
        pid = os.fork()
        if pid == 0:
            children = None
            break
        children.append(pid)
        if pid_file:
            with open(pid_file, "a") as out:
                out.write("%d\n" % pid)
    results = []
    others = [threading.Thread(target=lambda: results.append(run(kind, amount, thread_round)))
              for _ in range(threads - 1)]
    for thread in others:
        thread.start()
    acc = run(kind, amount, one_round)
    for thread in others:
        thread.join()
    if children is None:
        os._exit(0 if acc and len(results) == threads - 1 else 1)
    status = 0
    for pid in children:
        status |= os.waitpid(pid, 0)[1]
    if "--remove-perf-map" in argv[1:]:
        for path in ("/tmp/perf-%d.map", "/tmp/perf-%d.pylines"):
            if os.path.exists(path % os.getpid()):
                os.unlink(path % os.getpid())
    return 0 if acc and status == 0 and len(results) == threads - 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
