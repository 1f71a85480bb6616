"""pysqlite: Python code called back from a C library (SQLite).

Usage: python3 pysqlite.py SECONDS. query_loop() runs a query whose
user-defined SQL function is the Python function callback(), so that
the stacks run Python -> _sqlite3 -> libsqlite3 -> _sqlite3 -> Python.
A library built without frame pointers (Debian's libsqlite3) breaks a
frame-pointer call chain there: the chain from callback() must then say
it was cut, and never end short as if it were whole. Prints nothing.
"""
import sqlite3
import sys
import time


def callback(x):
    s = 0
    for i in range(200):
        s += i * x
    return s


def query_loop(db, seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        db.execute("select sum(callback(x)) from t").fetchone()


def main():
    db = sqlite3.connect(":memory:")
    db.create_function("callback", 1, callback)
    db.execute("create table t(x)")
    db.executemany("insert into t values (?)", [(i,) for i in range(2000)])
    query_loop(db, float(sys.argv[1]))


main()
