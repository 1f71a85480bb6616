"""Writes the line tables of code objects as the running interpreter keeps
them, with the line it gives each code unit, for test_linetable.c to check
src/python/linetable.c against.

Usage: python linetables.py > FILE

One line per code object:
  VERSION FORMAT FIRST_LINE BYTES TABLE_HEX LINES
FORMAT 1 is co_lnotab (3.8, 3.9), 2 the 3.10 co_linetable, 3 the 3.11+
location table; BYTES the bytecode's size; LINES the line of each code
unit in order (0: none), run-length coded as LINE*COUNT joined by ','. The
lines are the interpreter's own: dis.findlinestarts() before 3.10 (what
PyCode_Addr2Line answers), co_lines() on 3.10, co_positions() from 3.11.
The code objects: those of a made-up module with far line jumps, lines
without code, comprehensions, try/except and with blocks, and those of a
few standard modules, all nested ones included.
"""
import dis
import sys

MADE_UP = '''
import sys

def plain(a, b):
    c = a + b
    return c * 2

def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= 1
        else:
            continue
    while total > 0:
        total //= 2
    return total

def comprehension(xs):
    return [x * x for x in xs if x], {x: 1 for x in xs}, (x for x in xs)

def handlers(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as error:
        return str(error)
    finally:
        pass

def long_expression(a,
                    b,
                    c):
    return (a +
            b *
            c)

class Thing:
    def method(self):
        return self

    @property
    def prop(self):
        return 1

def far():
    x = 1
''' + "\n" * 300 + '''    y = 2
''' + "\n" * 70000 + '''    return x + y

async def coroutine():
    return 1
'''

MODULES = ["textwrap", "json.decoder", "shlex"]


def table_of(code):
    if sys.version_info >= (3, 11):
        return 3, code.co_linetable
    if sys.version_info >= (3, 10):
        return 2, code.co_linetable
    return 1, code.co_lnotab


def unit_lines(code):
    size = len(code.co_code)
    units = size // 2
    if sys.version_info >= (3, 11):
        lines = [line or 0 for line, _, _, _ in code.co_positions()]
        assert len(lines) == units, (len(lines), units)
        return lines
    if sys.version_info >= (3, 10):
        lines = [0] * units
        for start, end, line in code.co_lines():
            for offset in range(start, end, 2):
                lines[offset // 2] = line or 0
        return lines
    lines = [code.co_firstlineno] * units
    starts = list(dis.findlinestarts(code))
    for index, (offset, line) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else size
        for at in range(offset, end, 2):
            lines[at // 2] = line
    return lines


def run_length(lines):
    runs = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1][1] += 1
        else:
            runs.append([line, 1])
    return ",".join("%d*%d" % (line, count) for line, count in runs)


def walk(code, out):
    out.append(code)
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            walk(const, out)


def main():
    import importlib
    codes = []
    walk(compile(MADE_UP, "made_up.py", "exec"), codes)
    for name in MODULES:
        module = importlib.import_module(name)
        with open(module.__file__) as f:
            walk(compile(f.read(), module.__file__, "exec"), codes)
    version = "%d.%d" % sys.version_info[:2]
    for code in codes:
        form, table = table_of(code)
        sys.stdout.write("%s %d %d %d %s %s\n" % (version, form, code.co_firstlineno,
                                                   len(code.co_code), table.hex() or "-",
                                                   run_length(unit_lines(code))))


if __name__ == "__main__":
    main()
