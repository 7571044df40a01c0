"""Shared helpers of the pmix-py tests.

Every test runs its PMIx program in a child process (the library is process-wide),
bounded by a timeout, and kills only what it started (a process group of its own).
`PMIX_RUN` and `PMIX_TOPO` name the launcher and the CLI (set by the cargo test that
runs this suite, `pmix-tools/tests/python.rs`); without them they are looked for in
the workspace's target directory.

The peer is python3-pmix (OpenPMIx 4.2.2's own binding, Debian's `python3-pmix` for
/usr/bin/python3), run without `PYTHONPATH` so that it never loads our module;
`need_peer()` skips a test with a NOTICE without it, and fails under `CI=true`.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TESTDATA = ROOT / "testdata"
LIMIT = 90


def tool(var, name):
    path = os.environ.get(var)
    if path:
        return path
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("debug", "release"):
        p = target / profile / name
        if p.exists():
            return str(p)
    pytest.fail(f"{name} not found: set {var} or build it (cargo build -p pmix-tools)")


@pytest.fixture(scope="session")
def pmix_run():
    return tool("PMIX_RUN", "pmix-run")


@pytest.fixture(scope="session")
def pmix_topo():
    return tool("PMIX_TOPO", "pmix-topo")


def clean_env(extra=None):
    """The environment without any PMIx server's variables (a singleton), plus extra."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMIX_", "OMPI_"))}
    env.update(extra or {})
    return env


def run(cmd, env=None, limit=LIMIT, stdin=None):
    """Runs cmd in a process group of its own; kills the group past limit (and fails)."""
    p = subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"{cmd} ran past {limit} s\nstdout:\n{out}\nstderr:\n{err}")
    return p.returncode, out, err


def python(code, env=None, limit=LIMIT):
    """Runs a Python program (this interpreter, so this pmix module) as a singleton."""
    return run([sys.executable, "-c", code], env=env or clean_env(), limit=limit)


def under_pmix_run(pmix_run, n, code, args=(), limit=LIMIT, keep_going=False):
    """Runs a Python program as n ranks under pmix-run."""
    cmd = [pmix_run, "-n", str(n), "--timeout", str(limit - 10)]
    if keep_going:
        cmd.append("--keep-going")
    cmd += [sys.executable, "-c", code, *args]
    return run(cmd, env=clean_env(), limit=limit)


def rank_lines(out):
    """Lines "R: TEXT" grouped by rank R."""
    by = {}
    for line in out.splitlines():
        r, sep, text = line.partition(": ")
        if sep and r.isdigit():
            by.setdefault(int(r), []).append(text)
    return by


PEER = "/usr/bin/python3"


def peer_env(extra=None):
    """clean_env for python3-pmix's interpreter: no PYTHONPATH (it could name ours)."""
    env = clean_env(extra)
    env.pop("PYTHONPATH", None)
    return env


def have_peer():
    """Whether python3-pmix is installed for /usr/bin/python3."""
    try:
        code, _, _ = run([PEER, "-W", "ignore", "-c", "import pmix; pmix.PMIxServer"],
                         env=peer_env(), limit=60)
    except OSError:
        return False
    return code == 0


def need_peer():
    """python3-pmix's interpreter; a NOTICE and a skip without it (a failure under
    CI=true)."""
    if not have_peer():
        if os.environ.get("CI") == "true":
            pytest.fail("python3-pmix is missing (apt-get install python3-pmix)")
        print("NOTICE: python3-pmix is missing: the comparison with it is skipped")
        pytest.skip("python3-pmix missing")
    return PEER

