#!/usr/bin/env python3
"""One vocabulary (issue 21): fails when the library sources define an idea twice.

- A status is `pmix_core::Status`: no other `struct Status`, and no `Status(-N)`
  literal outside `pmix-core/src/status.rs` (a code has a name there); test code
  (`tests.rs` files, anything after `#[cfg(test)]`) may use raw codes.
- The namespace limit is `pmix_core::MAX_NSLEN`: no other `NSLEN` constant defined
  with a number.
- A process identity is `pmix_core::group::ProcId`: no other `struct ProcId`
  (`pmix_wire::Proc` is the wire's PROC element, which also names sets of
  processes: it converts to and from the identity).
- Data ranges and scopes by name: no `DataRange(N)` or `Scope(N)` literal outside
  the wire's definitions (`pmix-wire/src/value/scalar.rs`).
- An attribute key is `pmix_wire::keys`: no `"pmix.…"` / `"pmixrs.…"` string literal
  (plain, byte or C) outside `pmix-wire/src/keys.rs`; and every `PMIX_*` key defined
  there has the value `pmix-ffi/include/pmix_common.h` gives it, and OpenPMIx's own
  header's where one is installed (`pkg-config --variable=includedir pmix`).

Reads the tracked `*/src/**/*.rs` files; prints what it found and exits 1 on a
second definition.
"""

import re
import subprocess
import sys

files = [
    f
    for f in subprocess.check_output(["git", "ls-files", "*.rs"], text=True).split()
    if "/src/" in f and not f.startswith("fuzz/")
]
problems = []
structs = []
nslens = []
procids = []
KEYS = "pmix-wire/src/keys.rs"
key_literal = re.compile(r'(?:\b[bc])?"(?:pmix|pmixrs)\.[A-Za-z0-9_.-]*"')
for f in files:
    text = open(f, encoding="utf-8").read()
    lib = text.split("#[cfg(test)]", 1)[0] if not f.endswith("/tests.rs") else ""
    for n, line in enumerate(lib.splitlines(), 1):
        code = line.split("//", 1)[0]
        if re.search(r"\bstruct\s+Status\b", code):
            structs.append(f"{f}:{n}")
        if re.search(r"NSLEN\s*:\s*usize\s*=\s*\d", code):
            nslens.append(f"{f}:{n}")
        if re.search(r"\bstruct\s+ProcId\b", code):
            procids.append(f"{f}:{n}")
        if f != "pmix-wire/src/value/scalar.rs" and re.search(
            r"\b(DataRange|Scope)\(\d", code
        ):
            problems.append(f"{f}:{n}: a range or scope by number: {line.strip()}")
        if f != KEYS and not f.startswith("pmix-testkit/") and key_literal.search(code):
            problems.append(f"{f}:{n}: an attribute key written out (use pmix_wire::keys): {line.strip()}")
        if f != "pmix-core/src/status.rs" and re.search(r"\bStatus\(-\d", code):
            problems.append(f"{f}:{n}: a status literal: {line.strip()}")
# The keys' values against the headers.
keys_src = open(KEYS, encoding="utf-8").read()
ours = dict(re.findall(r'pub const ([A-Z0-9_]+): &str = "([^"]+)";', keys_src))
cs = dict(re.findall(r'pub const ([A-Z0-9_]+): &CStr = c"([^"]+)";', keys_src))
for name, val in cs.items():
    if ours.get(name) != val:
        problems.append(f"{KEYS}: c::{name} is {val!r}, its &str twin {ours.get(name)!r}")
headers = ["pmix-ffi/include/pmix_common.h"]
try:
    inc = subprocess.run(["pkg-config", "--variable=includedir", "pmix"], capture_output=True,
                         text=True).stdout.strip()
    if inc:
        headers.append(inc + "/pmix_common.h")
except OSError:
    pass
checked_keys = 0
for h in headers:
    try:
        htext = open(h, encoding="utf-8").read()
    except OSError:
        continue
    for name, val in re.findall(r'^#define\s+PMIX_([A-Z0-9_]+)\s+"([^"]*)"', htext, re.M):
        if name in ours:
            checked_keys += 1
            if ours[name] != val:
                problems.append(f"{KEYS}: {name} is {ours[name]!r}, {h} says {val!r}")
if len(structs) != 1 or not structs[0].startswith("pmix-core/src/status.rs:"):
    problems.append("status types defined at: " + ", ".join(structs))
if len(procids) != 1 or not procids[0].startswith("pmix-core/src/group/id.rs:"):
    problems.append("process ids defined at: " + ", ".join(procids))
if len(nslens) != 1:
    problems.append("namespace limits defined at: " + ", ".join(nslens))
for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(
    f"check-vocabulary: one Status ({structs[0]}), one namespace limit ({nslens[0]}), "
    f"one process id ({procids[0]}), ranges and scopes by name, "
    f"attribute keys only in {KEYS} ({len(ours)} keys, {checked_keys} checked against headers), "
    f"no status literal outside pmix-core/src/status.rs, in {len(files)} files"
)
