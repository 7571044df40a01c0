#!/usr/bin/env bash
# Every citation points into the repository (issue 21). Fails, printing file:line, when a
# tracked file outside .ci/ names a specification file kept outside the repository, or
# cites docs/<file>.md §x where the file or a heading numbered x does not exist.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
exec python3 - "$@" <<'PY'
import re, subprocess, sys
files = [f for f in subprocess.run(['git', 'ls-files', '-z'], capture_output=True,
         check=True).stdout.decode().split('\0') if f and not f.startswith('.ci/')]
outside = re.compile(r'\.\./shared|DESIGN §|\bCONVENTIONS \d'
                     r'|(?<![\w.-])(?<!docs/)(?:DESIGN|PROTOCOL|SERVING|CONVENTIONS|ABI)\.md')
cite = re.compile(r'docs/([\w-]+\.md)((?:\s*(?:§|,\s*§|/§|–)\s*[0-9](?:[0-9.]*[0-9])?)*)')
num = re.compile(r'[0-9]+(?:\.[0-9]+)*')
heads = {}
def headings(name):
    if name not in heads:
        try:
            text = open('docs/' + name, encoding='utf-8').read()
        except OSError:
            heads[name] = None
        else:
            heads[name] = {m.group(1) for m in
                           re.finditer(r'^#+\s+([0-9]+(?:\.[0-9]+)*)\.?\s', text, re.M)}
    return heads[name]
bad, checked = [], 0
for f in files:
    try:
        text = open(f, encoding='utf-8').read()
    except (OSError, UnicodeDecodeError):
        continue
    for i, line in enumerate(text.splitlines(), 1):
        if outside.search(line):
            bad.append(f'{f}:{i}: cites a file outside the repository: {line.strip()}')
        for m in cite.finditer(line):
            checked += 1
            h = headings(m.group(1))
            if h is None:
                bad.append(f'{f}:{i}: docs/{m.group(1)} does not exist')
                continue
            for n in num.findall(m.group(2)):
                if n not in h:
                    bad.append(f'{f}:{i}: docs/{m.group(1)} has no section {n}')
for b in bad:
    print(b)
print(f'check-citations: {checked} citations of docs/ checked, {len(bad)} problems')
sys.exit(1 if bad else 0)
PY
