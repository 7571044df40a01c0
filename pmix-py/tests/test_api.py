"""The whole of python3-pmix's API is ours (issue 37): every public method of its
PMIxClient, PMIxServer and PMIxTool (and the classes' order of inheritance), every
PMIX_* constant with its value (python3-pmix's keys are bytes, ours str: compared
decoded). Without python3-pmix these print a NOTICE and skip, except under CI=true.
And the type stubs (pmix.pyi) name every method of our classes."""

import ast
import json
import sys
from pathlib import Path

from conftest import PEER, clean_env, need_peer, peer_env, run

DUMP = r'''
import json, pmix
out = {'classes': {}, 'bases': {}, 'consts': {}}
for cls in ('PMIxClient', 'PMIxServer', 'PMIxTool'):
    c = getattr(pmix, cls, None)
    out['classes'][cls] = sorted(m for m in dir(c) if not m.startswith('_')) if c else []
    out['bases'][cls] = [b.__name__ for b in c.__mro__] if c else []
for n in dir(pmix):
    if n.startswith('PMIX_'):
        v = getattr(pmix, n)
        out['consts'][n] = v.decode() if isinstance(v, bytes) else v
print("API", json.dumps(out))
'''


def dump(python, env):
    code, out, err = run([python, "-W", "ignore", "-c", DUMP], env=env)
    assert code == 0, err
    line = [l for l in out.splitlines() if l.startswith("API ")][-1]
    return json.loads(line[4:])


def test_ours_has_every_method_of_python3_pmix_s_three_classes():
    need_peer()
    theirs, ours = dump(PEER, peer_env()), dump(sys.executable, clean_env())
    missing = {c: sorted(set(m) - set(ours["classes"][c])) for c, m in theirs["classes"].items()}
    print("python3-pmix's methods:", {c: len(m) for c, m in theirs["classes"].items()})
    print("ours:", {c: len(m) for c, m in ours["classes"].items()})
    assert missing == {"PMIxClient": [], "PMIxServer": [], "PMIxTool": []}, missing
    assert ours["bases"] == theirs["bases"], (ours["bases"], theirs["bases"])


def test_ours_defines_every_constant_of_python3_pmix_with_its_value():
    need_peer()
    theirs, ours = dump(PEER, peer_env())["consts"], dump(sys.executable, clean_env())["consts"]
    missing = sorted(set(theirs) - set(ours))
    differ = {n: (ours[n], v) for n, v in theirs.items() if n in ours and ours[n] != v}
    print(f"python3-pmix defines {len(theirs)} PMIX_* constants, ours {len(ours)}")
    assert missing == [] and differ == {}, (missing, differ)


def test_the_type_stubs_name_every_method_of_our_classes():
    stubs = ast.parse((Path(__file__).resolve().parent.parent / "pmix.pyi").read_text())
    declared = {
        n.name: {f.name for f in n.body if isinstance(f, ast.FunctionDef)}
        for n in stubs.body
        if isinstance(n, ast.ClassDef)
    }
    code, out, err = run([sys.executable, "-c", DUMP], env=clean_env())
    assert code == 0, err
    ours = json.loads([l for l in out.splitlines() if l.startswith("API ")][-1][4:])
    absent = {}
    for cls, methods in ours["classes"].items():
        # A subclass's stub declares what it adds; the rest is inherited.
        seen = set()
        for base in ours["bases"][cls]:
            seen |= declared.get(base, set())
        absent[cls] = sorted(set(methods) - seen)
    assert absent == {"PMIxClient": [], "PMIxServer": [], "PMIxTool": []}, absent
