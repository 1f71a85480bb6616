"""pylines: a CPython workload whose functions call each other at known lines.

Usage: python3 pylines.py SECONDS [THREADS]

Runs CPU-bound pure-Python work for about SECONDS of CPU time: several
calls in one function, calls in a loop, a call inside a list
comprehension, a generator resumed from two places (next() twice, then a
for loop), a method called back from a C builtin (sorted(key=...)), and
leaf functions whose time goes to their hot loops.

Every line that calls (or resumes) Python code carries a comment
"call: NAME..." naming the functions it calls; every line of a leaf's hot
loop carries "hot". tests/e2e/pylines_check.py reads them (and nothing
else of this file) to say which line each Python frame of a sample must
show. Keep every call on one line.
"""
import sys
import time

N = 3000


def leaf_square(n):
    total = 0
    for i in range(n):  # hot
        total += i * i  # hot
    return total


def leaf_xor(n):
    s = 0
    i = 0
    while i < n:  # hot
        s ^= i  # hot
        i += 1  # hot
    return s


def several(n):
    a = leaf_square(n)  # call: leaf_square
    b = leaf_xor(n)  # call: leaf_xor
    c = leaf_square(n // 2)  # call: leaf_square
    return a + b + c


def in_loop(n):
    t = 0
    for _ in range(3):
        t += leaf_xor(n)  # call: leaf_xor
    return t


def in_comprehension(n):
    return sum([leaf_square(n) for _ in range(2)])  # call: leaf_square <listcomp>


def producer(n):
    for _ in range(4):
        yield leaf_xor(n)  # call: leaf_xor


def resume_twice(n):
    g = producer(n)  # call: producer
    x = next(g)  # call: producer
    y = next(g)  # call: producer
    for z in g:  # call: producer
        x += z
    return x + y


class Keyed:
    def __init__(self, n):
        self.n = n

    def key(self, item):
        return leaf_square(self.n) + item  # call: leaf_square


def from_builtin(n):
    keyed = Keyed(n)  # call: __init__
    return sorted([3, 1, 2], key=keyed.key)  # call: key


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        several(N)  # call: several
        in_loop(N)  # call: in_loop
        in_comprehension(N)  # call: in_comprehension
        resume_twice(N)  # call: resume_twice
        from_builtin(N)  # call: from_builtin


def run():
    """With THREADS, that many threads run main() at once (free-threaded
    CPython: each thread but the first runs a copy of the bytecode of its
    own) while this one waits."""
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if not threads:
        main()  # call: main
        return
    import threading

    workers = [threading.Thread(target=main) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


if __name__ == "__main__":
    run()  # call: run
