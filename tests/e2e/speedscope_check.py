"""speedscope_check: checks for speedscope_browser.sh.

usage:
  speedscope_check.py json FILE.json COLLAPSE SCRIPT UNIT
      The document as speedscope's file-format schema describes it
      (https://www.speedscope.app/file-format-schema.json: $schema, the
      shared frames, sampled profiles with unit UNIT, startValue 0 and
      endValue the sum of the weights, as many weights as samples, every
      frame index in the table, activeProfileIndex the heaviest profile),
      read as strict UTF-8 JSON. Its samples, folded per profile, must be
      COLLAPSE (`pystitch collapse --per tid` with the same weight), and
      each profile's samples, in order, the stacks SCRIPT (`pystitch
      script -F comm,tid,ip,sym`) prints for that thread, in order.
  speedscope_check.py dom DOM.html FILE.json COLLAPSE exact|time
      What speedscope showed of FILE.json (chromium's --dump-dom of
      speedscope's sandwich view): the window title is the file's name;
      the profile list names every profile of the file, in order, with its
      total weight (exact: the number; time: as speedscope formats
      nanoseconds); the sandwich table of the profile speedscope opened
      holds one row per frame of that profile, and per frame name the self
      and total weights COLLAPSE gives that thread (exact mode).
Prints one line of figures; exit status 1 with the differences on stderr.
"""
import collections
import html.parser
import json
import re
import sys

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
PROFILE_NAME = re.compile(r"^(.*) pid: (-?\d+) tid: (-?\d+)$")


def fail(message):
    sys.stderr.write("speedscope_check: %s\n" % message)
    sys.exit(1)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        fail("%s: not UTF-8 JSON: %s" % (path, e))


def collapse_name(frame):
    """A frame of collapse's output as speedscope names it."""
    if frame.startswith("py::"):
        return frame[4:].split(":", 1)[0]
    return frame


def read_collapse(path):
    """{label: {stack tuple of names: weight}} from collapse --per tid."""
    folds = collections.defaultdict(collections.Counter)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            text, _, weight = line.rstrip("\n").rpartition(" ")
            parts = text.split(";")
            folds[parts[0]][tuple(collapse_name(p) for p in parts[1:])] += int(weight)
    return folds


def label(profile_name):
    """The collapse --per tid label of a profile named "comm pid: P tid: T"."""
    m = PROFILE_NAME.match(profile_name)
    if not m:
        fail("profile name %r is not 'comm pid: PID tid: TID'" % profile_name)
    return "%s-%s/%s" % (m.group(1).replace(" ", "_").replace(";", ":"), m.group(2), m.group(3))


def check_document(doc, unit):
    if doc.get("$schema") != SCHEMA:
        fail("$schema is %r" % doc.get("$schema"))
    frames = doc.get("shared", {}).get("frames")
    if not isinstance(frames, list):
        fail("no shared.frames array")
    for i, frame in enumerate(frames):
        if not isinstance(frame.get("name"), str):
            fail("frame %d has no name" % i)
        if "file" in frame and not isinstance(frame["file"], str):
            fail("frame %d: file is not a string" % i)
        if "line" in frame and not (isinstance(frame["line"], int) and frame["line"] > 0):
            fail("frame %d: line %r" % (i, frame["line"]))
        extra = set(frame) - {"name", "file", "line", "col"}
        if extra:
            fail("frame %d: fields %s outside the schema" % (i, sorted(extra)))
    profiles = doc.get("profiles")
    if not isinstance(profiles, list) or not profiles:
        fail("no profiles")
    for p in profiles:
        name = p.get("name")
        if p.get("type") != "sampled" or not isinstance(name, str):
            fail("profile %r: type %r" % (name, p.get("type")))
        if p.get("unit") not in UNITS or p.get("unit") != unit:
            fail("profile %r: unit %r, want %r" % (name, p.get("unit"), unit))
        samples, weights = p.get("samples"), p.get("weights")
        if not isinstance(samples, list) or not isinstance(weights, list):
            fail("profile %r: samples or weights missing" % name)
        if len(samples) != len(weights):
            fail("profile %r: %d samples, %d weights" % (name, len(samples), len(weights)))
        for stack in samples:
            for index in stack:
                if not isinstance(index, int) or not 0 <= index < len(frames):
                    fail("profile %r: frame index %r outside the table" % (name, index))
        if any(not isinstance(w, int) or w < 0 for w in weights):
            fail("profile %r: a weight that is not a count" % name)
        if p.get("startValue") != 0 or p.get("endValue") != sum(weights):
            fail("profile %r: startValue %r, endValue %r, weights sum to %d"
                 % (name, p.get("startValue"), p.get("endValue"), sum(weights)))
    totals = [sum(p["weights"]) for p in profiles]
    if doc.get("activeProfileIndex") != totals.index(max(totals)):
        fail("activeProfileIndex %r is not the heaviest profile (%r)"
             % (doc.get("activeProfileIndex"), totals))
    return frames, profiles


def read_script(path):
    """{(comm, tid): [stack root first, ...]} in script's order."""
    stacks = collections.defaultdict(list)
    key, frames = None, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                # "\t   IP SYM", " (inlined)" after an inlined frame's
                _, _, sym = line.strip().partition(" ")
                sym = sym.strip()
                if sym.endswith(" (inlined)"):
                    sym = sym[:-len(" (inlined)")]
                frames.append(collapse_name(sym))
            elif line == "":
                if key is not None:
                    stacks[key].append(tuple(reversed(frames)))
                key, frames = None, []
            else:
                m = re.match(r"^\s*(.*\S)\s+(\d+)\s*$", line)
                if not m:
                    fail("script line %r is not 'comm tid'" % line)
                key, frames = (m.group(1), m.group(2)), []
    if key is not None:
        stacks[key].append(tuple(reversed(frames)))
    return stacks


def mode_json(path, collapse_path, script_path, unit):
    doc = load(path)
    frames, profiles = check_document(doc, unit)
    names = [f["name"].replace(";", ":") for f in frames]
    folds = collections.defaultdict(collections.Counter)
    script = read_script(script_path)
    nr_samples = 0
    for p in profiles:
        stacks = [tuple(names[i] for i in s) for s in p["samples"]]
        for stack, weight in zip(stacks, p["weights"]):
            folds[label(p["name"])][stack] += weight
        m = PROFILE_NAME.match(p["name"])
        ordered = script.get((m.group(1), m.group(3)))
        if ordered != stacks:
            at = next((i for i, (a, b) in enumerate(zip(ordered or [], stacks)) if a != b),
                      min(len(ordered or []), len(stacks)))
            fail("profile %r: its samples are not script's stacks of thread %s in order "
                 "(%d against %d samples, first difference at sample %d)"
                 % (p["name"], m.group(3), len(stacks), len(ordered or []), at))
        nr_samples += len(stacks)
    want = read_collapse(collapse_path)
    for key in sorted(set(want) | set(folds)):
        # a zero weight is a sample speedscope leaves out; collapse keeps it
        got = {s: w for s, w in folds.get(key, {}).items() if w}
        expected = {s: w for s, w in want.get(key, {}).items() if w}
        if got != expected:
            diff = sorted(set(got.items()) ^ set(expected.items()))[:3]
            fail("%s: the samples folded differ from collapse, e.g. %s" % (key, diff))
    print("%d profiles, %d samples in time order, %d frames: the stacks of collapse and script"
          % (len(profiles), nr_samples, len(frames)))


class Dom(html.parser.HTMLParser):
    """The rows of the tables of speedscope's page: each <tr>'s title and
    cells (text, and the title of the cell)."""

    def __init__(self):
        super().__init__()
        self.rows, self.title, self.row, self.cell, self.in_title = [], None, None, None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            self.row = {"title": attrs.get("title"), "cells": []}
        elif tag == "td" and self.row is not None:
            self.cell = {"title": attrs.get("title"), "text": ""}
        elif tag == "title":
            self.in_title, self.title = True, ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row["cells"].append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None
        elif tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data
        if self.in_title:
            self.title += data


def speedscope_time(ns):
    """speedscope's TimeFormatter for nanoseconds, as its bundle formats."""
    n = ns * 1e-9
    if n / 60 >= 1:
        minutes = int(n // 60)
        return "%d:%02d" % (minutes, int(n - minutes * 60))
    if n >= 1:
        return "%.2fs" % n
    if n / 0.001 >= 1:
        return "%.2fms" % (n / 0.001)
    if n / 1e-6 >= 1:
        return "%.2f\u00b5s" % (n / 1e-6)
    return "%.2fns" % (n / 1e-9)


def shown_number(text):
    """The number of "1,234 (56%)"."""
    return int(text.split(" ")[0].replace(",", "").replace("\u202f", "").replace(".", ""))


def mode_dom(dom_path, path, collapse_path, mode):
    doc = load(path)
    frames, profiles = doc["shared"]["frames"], doc["profiles"]
    dom = Dom()
    with open(dom_path, encoding="utf-8") as f:
        dom.feed(f.read())
    if dom.title != "%s - speedscope" % doc.get("name"):
        fail("the window title is %r, not the file's name %r" % (dom.title, doc.get("name")))
    listed = [r for r in dom.rows if r["title"] is not None and len(r["cells"]) == 3]
    if [r["title"] for r in listed] != [p["name"] for p in profiles]:
        fail("speedscope lists the profiles %r, the file has %r"
             % ([r["title"] for r in listed], [p["name"] for p in profiles]))
    for row, p in zip(listed, profiles):
        shown, total = row["cells"][2]["text"].strip(), sum(p["weights"])
        if mode == "exact":
            ok = shown_number(shown) == total
        else:
            # the last digit may round the other way
            want = speedscope_time(total)
            ok = shown == want or (shown[-2:] == want[-2:] and abs(
                float(re.sub(r"[^0-9.]", "", shown)) - float(re.sub(r"[^0-9.]", "", want))) < 0.011)
        if not ok:
            fail("profile %r: speedscope shows a total of %r, its weights sum to %d"
                 % (p["name"], shown, total))
    active = profiles[doc["activeProfileIndex"]]
    # the sandwich table's rows: "weight (share%)" in the first cell; the
    # frame's file is the name cell's title (none for a frame without)
    table = [r for r in dom.rows if r["title"] is None and len(r["cells"]) == 3
             and re.match(r"^\S+ \(.*%\)$", r["cells"][0]["text"].strip())]
    used = {i for s in active["samples"] for i in s}
    if len(table) != len(used):
        fail("the sandwich view of %r has %d rows, the profile %d frames"
             % (active["name"], len(table), len(used)))
    files = collections.defaultdict(set)
    for i in used:
        files[frames[i]["name"]].add(frames[i].get("file", ""))
    rows_of = collections.defaultdict(list)
    for row in table:
        name = row["cells"][2]["text"].strip()
        if (row["cells"][2]["title"] or "") not in files.get(name, ()):
            fail("sandwich row %r in file %r: no such frame in the profile"
                 % (name, row["cells"][2]["title"]))
        rows_of[name].append(row)
    checked = 0
    if mode == "exact":
        folds = read_collapse(collapse_path)[label(active["name"])]
        self_of, total_of = collections.Counter(), collections.Counter()
        for stack, weight in folds.items():
            if stack:
                self_of[stack[-1]] += weight
            for name in set(stack):
                total_of[name] += weight
        if set(rows_of) != set(total_of):
            fail("sandwich names differ from collapse's: %s"
                 % sorted(set(rows_of) ^ set(total_of))[:5])
        for name, rows in rows_of.items():
            shown_self = sum(shown_number(r["cells"][1]["text"]) for r in rows)
            if shown_self != self_of[name]:
                fail("%s: speedscope shows a self weight of %d, collapse %d"
                     % (name, shown_self, self_of[name]))
            if len(rows) == 1:
                shown_total = shown_number(rows[0]["cells"][0]["text"])
                if shown_total != total_of[name]:
                    fail("%s: speedscope shows a total weight of %d, collapse %d"
                         % (name, shown_total, total_of[name]))
                checked += 1
    print("speedscope showed %d profiles with their totals; %r opened: %d frames%s"
          % (len(listed), active["name"], len(table),
             ", every self weight and %d totals as collapse's" % checked if mode == "exact" else ""))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "json":
        mode_json(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "dom" and sys.argv[5] in ("exact", "time"):
        mode_dom(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
