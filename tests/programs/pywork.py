"""pywork: a CPython workload for the native-stack tests.

Usage: python3 pywork.py [SECONDS]. Runs JSON encoding and decoding,
regular expressions, sorting with a key function and a recursive function
in turns for SECONDS of CPU time (default 1.0), so native stacks run
through the interpreter loop, C extension modules and deep recursion.
Prints nothing on stdout.
"""
import json
import re
import sys
import time

WORDS = re.compile(r"\b([a-z]+)(\d+)\b")


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def descend(depth, value):
    if depth == 0:
        return fib(12) + value
    return descend(depth - 1, value + 1) + 1


def json_round(seed):
    doc = {"items": [{"id": i, "name": "item%d" % (i * seed % 97), "tags": ["a", "b", str(i)]}
                     for i in range(200)]}
    return len(json.loads(json.dumps(doc, sort_keys=True))["items"])


def regex_round(seed):
    text = " ".join("word%d other%d" % (i, i * seed % 13) for i in range(300))
    return sum(int(number) for _, number in WORDS.findall(text))


def sort_round(seed):
    values = [(i * 7919 + seed) % 10007 for i in range(3000)]
    return sorted(values, key=lambda v: (v % 101, -v))[0]


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    start = time.process_time()
    total = 0
    seed = 1
    while time.process_time() - start < seconds:
        total += json_round(seed)
        total += regex_round(seed)
        total += sort_round(seed)
        total += descend(60, seed)
        seed += 1
    return 0 if total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
