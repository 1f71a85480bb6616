"""pymodule_check: behaviour of the pystitch_perf extension module
(python/), run with the built module on PYTHONPATH and the module not yet
enabled.

Usage: python3 pymodule_check.py

Checks that enable()/disable()/enable() leave the interpreter computing
the same results (calls, recursion, generators and throw(), exceptions,
closures, methods, a second thread, sys.settrace); that enabling twice is
harmless; that every line of /tmp/perf-PID.map parses as
`ADDR SIZE py::NAME:FILENAME` with SIZE the template's size and ADDR
16-byte aligned; that the functions run while enabled are named there (by
co_qualname on 3.11, co_name before) and those run while disabled are not;
that code objects that die give their trampolines back (the same name
reuses its slot without a new map line; new names beyond the parking
limit reuse parked slots); and that a child made by os.fork() gets its
own map, holding the parent's lines, to which it adds its own while the
parent's stays as it was. And the side file /tmp/perf-PID.pylines: every
record parses; each function run while enabled has a code record with its
name, file, bytecode size and first line, and with the trampoline its map
line names; dead code objects have their free records; a forked child's
side file starts with the parent's records. On CPython 3.12+ (where the
trampolines are CPython's own): enable() turns them on, and the side file
holds the code objects that existed before and those made after, the
frees, and the trampolines CPython gave them. Prints one summary line; exit status 1 and the failed checks on
stderr when any check fails.
"""
import os
import re
import struct
import sys
import threading

import _pystitch_perf as perf

LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) py::([^\n]*):([^\n]*)$")
FAILED = []
QUALNAMES = sys.version_info >= (3, 11)
OWN_MAP = sys.version_info < (3, 12)  # the module's trampolines and map


def check(condition, message):
    if not condition:
        FAILED.append(message)
    return condition


def map_path(pid=None):
    return "/tmp/perf-%d.map" % (os.getpid() if pid is None else pid)


def lines_path(pid=None):
    return "/tmp/perf-%d.pylines" % (os.getpid() if pid is None else pid)


def read_side_file(pid=None):
    """The records of the side file: (header, [(type, time, fields)]),
    checking that each parses; fields of a code record: object, bytecode,
    size, first line, format, name, file."""
    with open(lines_path(pid), "rb") as f:
        data = f.read()
    check(data[:8] == b"PYSTLINE", "the side file has no magic")
    header = struct.unpack_from("<6I", data, 8)
    check(header[0] == 1 and header[1] == 32, "side file header %r" % (header,))
    check(header[2] == sys.hexversion, "side file for PY_VERSION_HEX %x" % header[2])
    records = []
    offset = 32
    while offset < len(data):
        if not check(offset + 16 <= len(data), "a side-file record is cut at %d" % offset):
            break
        kind, _, size, time = struct.unpack_from("<HHIQ", data, offset)
        if not check(size >= 16 and size % 8 == 0 and offset + size <= len(data),
                     "side-file record of size %d at %d" % (size, offset)):
            break
        if kind == 1:
            obj, bytecode, nbytes, first, form, tsize, nsize, fsize = struct.unpack_from(
                "<QQIiIIII", data, offset + 16)
            at = offset + 56 + tsize
            fields = (obj, bytecode, nbytes, first, form, data[at:at + nsize].decode(),
                      data[at + nsize:at + nsize + fsize].decode())
        elif kind in (2, 3):
            fields = struct.unpack_from("<QQ" if kind == 2 else "<Q", data, offset + 16)
        else:
            check(False, "side-file record of unknown type %d" % kind)
            fields = ()
        records.append((kind, time, fields))
        offset += size
    return header, records


def code_records(records):
    """name:file -> [code record fields]"""
    found = {}
    for kind, _, fields in records:
        if kind == 1:
            found.setdefault("py::%s:%s" % (fields[5], fields[6]), []).append(fields)
    return found


def check_side_file(functions, own_trampolines, map_lines=()):
    """Each function's code record (and trampoline); returns the records."""
    _, records = read_side_file()
    codes = code_records(records)
    trampolines = {}
    for kind, _, fields in records:
        if kind == 2:
            trampolines.setdefault(fields[0], set()).add(fields[1])
    mapped = {}
    for line in map_lines:
        match = LINE.match(line)
        if match:
            mapped.setdefault("py::%s:%s" % (match.group(3), match.group(4)), set()).add(
                int(match.group(1), 16))
    for function in functions:
        code = function.__code__
        found = [f for f in codes.get(name(function), []) if f[0] == id(code)]
        if not check(found, "%s has no code record" % name(function)):
            continue
        fields = found[-1]
        check(fields[2] == len(code.co_code), "%s: %d bytecode bytes, not %d" % (
            name(function), fields[2], len(code.co_code)))
        check(fields[3] == code.co_firstlineno, "%s: first line %d, not %d" % (
            name(function), fields[3], code.co_firstlineno))
        check(fields[4] == (3 if sys.version_info >= (3, 11) else
                            2 if sys.version_info >= (3, 10) else 1),
              "%s: table format %d" % (name(function), fields[4]))
        if own_trampolines:
            check(trampolines.get(id(code), set()) & mapped.get(name(function), set()),
                  "%s: no trampoline record for its map line" % name(function))
    return records


def read_map(pid=None):
    with open(map_path(pid)) as f:
        return f.read()


def name(function):
    """The name the module writes for FUNCTION."""
    code = function.__code__
    return "py::%s:%s" % (function.__qualname__ if QUALNAMES else code.co_name, code.co_filename)


# ---- workloads with known results ----------------------------------------

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def squares(count):
    for i in range(count):
        yield i * i


def catcher():
    caught = []
    while True:
        try:
            yield len(caught)
        except ValueError as error:
            caught.append(str(error))


class Account:
    def __init__(self, balance):
        self.balance = balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError("insufficient")
        self.balance -= amount
        return self.balance

    @property
    def doubled(self):
        return self.balance * 2


def make_adder(step):
    def add(value):
        return value + step
    return add


def deep(depth):
    return depth if depth == 0 else 1 + deep(depth - 1)


def in_thread(results):
    results.append(sum(sorted((fib(12) for _ in range(3)), key=lambda v: -v)))


def workload():
    """Returns a tuple of results that must not depend on the evaluator."""
    results = [fib(18), sum(squares(100)), deep(200)]
    gen = catcher()
    next(gen)
    results.append(gen.throw(ValueError("one")))
    results.append(gen.throw(ValueError("two")))
    account = Account(10)
    results.append(account.withdraw(3))
    try:
        account.withdraw(100)
        results.append("no exception")
    except ValueError as error:
        results.append(str(error))
    results.append(account.doubled)
    results.append(list(map(make_adder(5), [1, 2, 3])))
    thread_results = []
    thread = threading.Thread(target=in_thread, args=(thread_results,))
    thread.start()
    thread.join()
    results.append(thread_results)
    return tuple(repr(r) for r in results)


def traced_calls():
    calls = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is fib.__code__:
            calls.append(1)
        return None

    sys.settrace(tracer)
    try:
        fib(10)
    finally:
        sys.settrace(None)
    return len(calls)


# ---- checks ----------------------------------------------------------------

def check_map():
    """Every line parses; sizes and alignment as the module reports."""
    stats = perf._stats()
    lines = read_map().split("\n")
    check(lines[-1] == "", "the map does not end with a newline")
    lines = lines[:-1]
    check(len(lines) == stats["map_lines"], "%d map lines, the module counted %d" % (
        len(lines), stats["map_lines"]))
    size = "%x" % stats["template_size"]
    bad = [line for line in lines if not LINE.match(line)]
    check(not bad, "%d map lines do not parse, first %r" % (len(bad), bad[:1]))
    for line in lines:
        match = LINE.match(line)
        if not match:
            continue
        if not check(match.group(2) == size, "size %s, not the template's %s: %r" % (
                match.group(2), size, line)):
            break
        if not check(int(match.group(1), 16) % 16 == 0, "address not 16-byte aligned: %r" % line):
            break
    return lines, stats


def check_dying_code():
    """Dead code objects park their trampolines; the same name takes its slot back."""
    before = perf._stats()
    for i in range(3000):
        namespace = {}
        exec(compile("def recycled(x):\n    return x + %d\n" % i, "<recycled>", "exec"), namespace)
        check(namespace["recycled"](1) == i + 1, "recycled code computed a wrong result")
        namespace.clear()  # the function and its globals hold each other
    after = perf._stats()
    # each round: the exec'd <module> code and recycled, both named as the round before
    check(after["slots"] - before["slots"] <= 4,
          "3000 rounds of the same two names took %d new slots" % (
              after["slots"] - before["slots"]))
    check(after["map_lines"] - before["map_lines"] <= 4,
          "3000 rounds of the same two names wrote %d map lines" % (
              after["map_lines"] - before["map_lines"]))
    before = after
    for i in range(3000):
        namespace = {}
        exec(compile("def unique_%d():\n    return %d\n" % (i, i), "<unique>", "exec"), namespace)
        check(namespace["unique_%d" % i]() == i, "unique code computed a wrong result")
        namespace.clear()
    after = perf._stats()
    # 3000 new names: slots grow until 1024 are parked, then parked ones are renamed
    grown = after["slots"] - before["slots"]
    check(grown <= 1100, "3000 dead functions of new names took %d new slots" % grown)
    check(after["map_lines"] - before["map_lines"] >= 3000,
          "3000 new names wrote only %d map lines" % (after["map_lines"] - before["map_lines"]))
    check(after["lines_frees"] - before["lines_frees"] >= 3000,
          "3000 dead code objects wrote %d free records" % (
              after["lines_frees"] - before["lines_frees"]))


def check_fork():
    def before_fork():
        return 1

    before_fork()
    parent_map = read_map()
    with open(lines_path(), "rb") as f:
        parent_lines = f.read()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            # made in the child (a nested function's code object is made
            # with its module, in the parent)
            namespace = {"__name__": "forked"}
            exec(compile("def child_only():\n    return 2\n", __file__, "exec"), namespace)
            child_only = namespace["child_only"]
            child_only()
            with open(lines_path(), "rb") as f:
                child_lines = f.read()
            # 3.12+ starts the child's map afresh (CPython's own)
            if OWN_MAP and not read_map().startswith(parent_map):
                status = 3
            elif not OWN_MAP and not os.path.exists(map_path()):
                status = 3
            elif child_lines[32:len(parent_lines)] != parent_lines[32:]:
                status = 7
            elif name(child_only) not in code_records(read_side_file()[1]):
                status = 8
            elif OWN_MAP and name(child_only) not in read_map():
                status = 4
            elif not perf.is_enabled():
                status = 5
        except BaseException:
            status = 6
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    child_map_path = map_path(pid)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, {
        3: "the child's map does not start with the parent's lines (or it has none)",
        4: "the child's map does not name the child's own function",
        5: "the child is not enabled",
        6: "the child raised an exception",
        7: "the child's side file does not start with the parent's records",
        8: "the child's side file has no record of the child's own function",
    }.get(os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1,
          "the child failed (wait status %d)" % status))
    check(os.path.exists(child_map_path), "the child has no map %s" % child_map_path)
    parent_after = read_map()
    check(parent_after.startswith(parent_map), "the parent's map changed in the fork")
    check("child_only" not in parent_after, "the child wrote into the parent's map")
    check(not [c for c in code_records(read_side_file()[1]) if "child_only" in c],
          "the child wrote into the parent's side file")
    for path in (child_map_path, lines_path(pid)):
        if os.path.exists(path):
            os.unlink(path)


def main_312():
    """3.12+: the side file beside CPython's own trampolines."""
    check(not sys.is_stack_trampoline_active(), "trampolines on before enable() (-X perf?)")
    check(not perf.is_enabled(), "enabled before enable() (is PYSTITCH_PERF set?)")
    expected = workload()
    perf.enable()
    perf.enable()  # harmless
    check(perf.is_enabled(), "not watching code objects after enable()")
    check(sys.is_stack_trampoline_active(), "enable() did not turn CPython's trampolines on")
    check(workload() == expected, "results differ with the module enabled")
    namespace = {}
    exec(compile("def made_after(x):\n    return x + 1\n", "<made>", "exec"), namespace)
    made_after = namespace["made_after"]
    check(made_after(1) == 2, "code made after enable() computed a wrong result")
    before = perf._stats()
    for i in range(300):
        exec(compile("def dying(x):\n    return x + %d\n" % i, "<dying>", "exec"), {})
    after = perf._stats()
    check(after["lines_frees"] - before["lines_frees"] >= 300,
          "300 dead code objects wrote %d free records" % (
              after["lines_frees"] - before["lines_frees"]))
    # fib existed before enable(), made_after was made after it; the
    # trampolines CPython gave them, as its map names them (what atexit
    # writes for the code objects alive)
    perf._exit_trampolines()
    records = check_side_file((fib, squares, Account.withdraw, workload, made_after), True,
                              read_map().split("\n"))
    check_fork()
    stats = perf._stats()
    check(stats["lines_open"] and stats["lines_errno"] == 0, "the side file was given up: %r" % stats)
    perf.disable()
    check(not perf.is_enabled(), "watching after disable()")
    sys.deactivate_stack_trampoline()
    for path in (map_path(), lines_path()):
        if os.path.exists(path):
            os.unlink(path)
    return report("side file: %d records, %d code objects, %d frees" % (
        len(records), stats["lines_codes"], stats["lines_frees"]))


def main():
    if sys.version_info >= (3, 12):
        return main_312()

    check(not perf.is_enabled(), "enabled before enable() (is PYSTITCH_PERF set?)")
    expected = workload()
    expected_calls = traced_calls()
    check(expected_calls == 177, "sys.settrace saw %d calls of fib(10), not 177" % expected_calls)

    def before_enable():
        return 0

    perf.enable()
    perf.enable()  # harmless
    check(perf.is_enabled(), "not enabled after enable()")
    check(workload() == expected, "results differ with the module enabled")
    check(traced_calls() == expected_calls, "sys.settrace sees other calls with the module enabled")
    perf.disable()
    check(not perf.is_enabled(), "enabled after disable()")

    def while_disabled():
        return 1

    while_disabled()
    check(workload() == expected, "results differ after disable()")
    perf.enable()
    check(perf.is_enabled(), "not enabled after enable() again")
    check(workload() == expected, "results differ after enable() again")
    check_dying_code()
    check_fork()

    lines, stats = check_map()
    check(stats["map_fd_open"] and stats["map_errno"] == 0, "the map was given up: %r" % stats)
    names = set(line.split(" ", 2)[2] for line in lines if LINE.match(line))
    for function in (fib, squares, catcher, Account.withdraw, in_thread, deep, workload):
        check(name(function) in names, "%s is not in the map" % name(function))
    lambda_name = "in_thread.<locals>.<lambda>" if QUALNAMES else "<lambda>"
    check(any(n.startswith("py::%s:" % lambda_name) for n in names),
          "the thread's lambda (%s) is not in the map" % lambda_name)
    check(name(while_disabled) not in names, "a function run while disabled is in the map")
    check(name(before_enable) not in names, "a function never run is in the map")
    check(stats["lines_open"] and stats["lines_errno"] == 0, "the side file was given up: %r" % stats)
    records = check_side_file((fib, squares, catcher, Account.withdraw, in_thread, deep, workload),
                              True, lines)
    check(name(while_disabled) not in code_records(records),
          "a function run while disabled is in the side file")
    perf.disable()
    os.unlink(map_path())
    os.unlink(lines_path())
    return report("%d map lines, %d slots in %d arenas, %d parked; side file: %d records" % (
        stats["map_lines"], stats["slots"], stats["arenas"], stats["parked"], len(records)))


def report(summary):
    version = "%d.%d.%d" % sys.version_info[:3]
    if FAILED:
        for message in FAILED:
            sys.stderr.write("pymodule_check: %s: %s\n" % (version, message))
        print("module %s: FAIL (%d checks)" % (version, len(FAILED)))
        return 1
    print("module %s: ok; %s" % (version, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
