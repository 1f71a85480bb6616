#!/usr/bin/env bash
# The man page documents every command and option that --help lists, and
# lists no option a command does not take: for each command named in
# `pystitch --help`, every long and short option of `pystitch CMD --help`
# must appear in the man page's "CMD OPTIONS" section (or under COMMON
# OPTIONS), every option a .TP item of that section introduces must be in
# the command's --help, and the command must appear in the SYNOPSIS.
set -euo pipefail
pystitch=${abs_top_builddir:-.}/pystitch
man=${abs_top_srcdir:-.}/man/pystitch.1
[ -x "$pystitch" ] || { echo "FAIL: no $pystitch"; exit 1; }

"$pystitch" --help >/dev/null
python3 - "$pystitch" "$man" <<'PY'
import re, subprocess, sys

pystitch, man_path = sys.argv[1], sys.argv[2]
man = open(man_path).read().replace('\\-', '-').replace('\\fR', '').replace('\\fP', '')

# sections by .SH heading
sections = {}
for part in re.split(r'^\.SH ', man, flags=re.M)[1:]:
    head, _, body = part.partition('\n')
    sections[head.strip().strip('"')] = body

def help_text(*args):
    return subprocess.run([pystitch, *args], capture_output=True, text=True, check=True).stdout

top = help_text('--help')
commands = re.findall(r'^  ([a-z]+) +[a-z]', top, flags=re.M)
if 'script' not in commands or len(commands) < 4:
    sys.exit(f'FAIL: could not read the command list from --help: {commands}')

def options_of(text):
    """Options an option line of --help introduces: '  -i, --input FILE'."""
    opts = set()
    for line in text.splitlines():
        m = re.match(r'^  {1,6}(-[A-Za-z](?:, |\s))?\s*(--[a-z][a-z0-9-]*)?', line)
        if not m or not (m.group(1) or m.group(2)):
            continue
        if m.group(1):
            opts.add(m.group(1).strip(', ').strip())
        if m.group(2):
            opts.add(m.group(2))
    return opts

def mentioned(opt, text):
    return re.search(r'(?<![\w-])' + re.escape(opt) + r'(?![\w-])', text) is not None

failures = []
common = sections.get('COMMON OPTIONS', '')
synopsis = sections.get('SYNOPSIS', '')
for cmd in commands:
    section_name = f'{cmd.upper()} OPTIONS'
    body = sections.get(section_name)
    if body is None:
        failures.append(f'{cmd}: no "{section_name}" section in the man page')
        continue
    if not mentioned(cmd, synopsis) and cmd != 'script':
        failures.append(f'{cmd}: not in the SYNOPSIS')
    text = help_text(cmd, '--help')
    helped = options_of(text)
    if not helped:
        failures.append(f'{cmd}: --help lists no options')
    for opt in sorted(helped):
        if not (mentioned(opt, body) or mentioned(opt, common)):
            failures.append(f'{cmd}: {opt} is in --help but not in the man page')
    # every .TP item of the command's own section is an option it takes
    for item in re.findall(r'^\.TP\n(.*)$', body, flags=re.M):
        for opt in re.findall(r'(?<![\w-])(--?[A-Za-z][a-z0-9-]*)', item):
            if opt not in helped and not mentioned(opt, text):
                failures.append(f'{cmd}: the man page documents {opt}, --help does not')

if failures:
    print('\n'.join('FAIL: ' + f for f in failures))
    sys.exit(1)
print(f'PASS: {len(commands)} commands ({", ".join(commands)}): --help and the man page agree')
PY
