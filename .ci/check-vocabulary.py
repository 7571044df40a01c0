#!/usr/bin/env python3
"""One vocabulary (issue 21): fails when the library sources define an idea twice.

- A status is `pmix_core::Status`: no other `struct Status`, and no `Status(-N)`
  literal outside `pmix-core/src/status.rs` (a code has a name there); test code
  (`tests.rs` files, anything after `#[cfg(test)]`) may use raw codes.
- The namespace limit is `pmix_core::MAX_NSLEN`: no other `NSLEN` constant defined
  with a number.

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
for f in files:
    text = open(f, encoding="utf-8").read()
    lib = text.split("#[cfg(test)]", 1)[0] if not f.endswith("/tests.rs") else ""
    for n, line in enumerate(lib.splitlines(), 1):
        code = line.split("//", 1)[0]
        if re.search(r"\bstruct\s+Status\b", code):
            structs.append(f"{f}:{n}")
        if re.search(r"NSLEN\s*:\s*usize\s*=\s*\d", code):
            nslens.append(f"{f}:{n}")
        if f != "pmix-core/src/status.rs" and re.search(r"\bStatus\(-\d", code):
            problems.append(f"{f}:{n}: a status literal: {line.strip()}")
if len(structs) != 1 or not structs[0].startswith("pmix-core/src/status.rs:"):
    problems.append("status types defined at: " + ", ".join(structs))
if len(nslens) != 1:
    problems.append("namespace limits defined at: " + ", ".join(nslens))
for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(
    f"check-vocabulary: one Status ({structs[0]}), one namespace limit ({nslens[0]}), "
    f"no status literal outside pmix-core/src/status.rs, in {len(files)} files"
)
