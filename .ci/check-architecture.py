#!/usr/bin/env python3
"""ARCHITECTURE.md is a current map: fails when a source folder is not named in it, or
when a path it names does not exist.

Folders: every folder holding tracked files under a crate's `src/`, and
`pmix-ffi/include`, `fuzz/fuzz_targets`, `testdata`, `docs`, `.ci`, must appear in
backquotes (`pmix/src/client/`). Paths: every backquoted token or link target that
looks like a path (has a `/` or a file extension we keep) must exist, either from the
repository's root or as the tail of a tracked path (`core/relay.rs` inside a row about
`pmix/src/server/`); absolute paths (`/sys`), globs and `target/` are skipped.

And one rule of the map: the client never imports the server. No file under
`pmix/src/client/` (the connection, the instance, its calls and its group records)
names `crate::server` or `super::server`, nor the server's types re-exported at the
crate root (`crate::Server`, `crate::ServerConfig`), outside comments (what both use
lives at the top of `pmix/src`: `os.rs`, `events.rs`, `service.rs`, ...; or in
`pmix_wire::keys`).
"""

import os
import re
import subprocess
import sys

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                      text=True, check=True).stdout.strip()
os.chdir(root)
files = [f for f in subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                                    check=True).stdout.splitlines() if f]
dirs = set()
for f in files:
    d = os.path.dirname(f)
    while d:
        dirs.add(d)
        d = os.path.dirname(d)
text = open("ARCHITECTURE.md", encoding="utf-8").read()
named = {t.strip("/") for t in re.findall(r"`([^`\s]+)`", text)}

must = sorted(d for d in dirs
              if re.match(r"^[\w.-]+/src(/|$)", d)
              or d in ("pmix-ffi/include", "fuzz/fuzz_targets", "testdata", "docs", ".ci"))
missing = [d for d in must if d not in named]

EXT = re.compile(r"\.(rs|md|sh|py|h|c|toml|txt)$")
tokens = re.findall(r"`([^`\s]+)`", text) + re.findall(r"\]\(([^)\s#]+)", text)
bad = []
for tok in tokens:
    t = tok.rstrip("/")
    if not ("/" in t or EXT.search(t)) or "::" in t or t.startswith(("/", "http")):
        continue
    if "*" in t or t.startswith("target"):
        continue
    if os.path.exists(t) or t in dirs:
        continue
    if any(f == t or f.endswith("/" + t) for f in files) or any(d.endswith("/" + t) for d in dirs):
        continue
    bad.append(tok)

client_files = [f for f in files if f.startswith("pmix/src/client/") and f.endswith(".rs")]
SERVER = re.compile(r"\b(crate|super)::server\b|\bcrate::(Server|ServerConfig)\b")
imports = []
for f in client_files:
    for n, line in enumerate(open(f, encoding="utf-8").read().splitlines(), 1):
        code = line.split("//", 1)[0]
        if SERVER.search(code):
            imports.append(f"{f}:{n}: the client imports the server: {line.strip()}")
for i in imports:
    print(i)

for d in missing:
    print(f"ARCHITECTURE.md: folder {d}/ is not named")
for b in sorted(set(bad)):
    print(f"ARCHITECTURE.md: {b} does not exist")
if missing or bad or imports:
    sys.exit(1)
print(f"check-architecture: {len(must)} folders named, {len(tokens)} paths checked, "
      f"{len(client_files)} client files import nothing of the server")
