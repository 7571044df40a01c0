"""Rank-state tracking from Python (pmix_ft.h's calls as `ft_*`): 4 ranks under
pmix-run --keep-going, rank 3 killed (SIGKILL) after the first validate_global; every
survivor detects it, validates, agrees and shrinks alike."""

from conftest import rank_lines, under_pmix_run


def test_survivors_validate_agree_and_shrink_alike_after_a_rank_is_killed(pmix_run):
    code, out, err = under_pmix_run(pmix_run, 4, """
import os, signal, time
from pmix import *
c = PMIxClient()
rc, me = c.init()
g, r = me['nspace'], me['rank']
say = lambda *a: print(f"{r}:", *a, flush=True)
say("size", c.ft_validate_global(g))
if r == 3:
    os.kill(os.getpid(), signal.SIGKILL)
until = time.time() + 20
while len(c.ft_get_failed(g)[1]) < 1 and time.time() < until:
    time.sleep(0.005)
say("local", c.ft_validate_local(g), c.ft_get_state_local(g, PMIXRS_FT_STATE_FAILED))
say("global before validate", c.ft_get_num_state_global(g, 0))
say("global", c.ft_validate_global(g), c.ft_get_state_global(g, 0))
say("count", c.ft_validate_global_count(g, PMIXRS_FT_STATE_NULL | PMIXRS_FT_MOD_OLD))
say("agree", c.ft_agree(g, 0x3 if r else 0x1))
say("ack", c.ft_ack_failed(g, 10), c.ft_get_acked(g))
say("agree acked", c.ft_agree(g, 0x3 if r else 0x1))
rc, new_rank, new_size = c.ft_shrink(g, "py-shrunk")
say("shrink", rc, new_size)
say("revoked", c.ft_is_revoked(g))
c.finalize()
""", keep_going=True)
    by = rank_lines(out)
    null_new, failed_new = 4 | 8, 2 | 8
    for r in (0, 1, 2):
        assert by.get(r) == [
            "size (0, 0, 0)",
            f"local (0, 1, 1) (0, [{{'rank': 3, 'state': {failed_new}}}])",
            "global before validate (0, 0)",
            f"global (0, 1, 1) (0, [{{'rank': 3, 'state': {null_new}}}])",
            "count (0, 1)",
            "agree (-200, 1)",
            "ack (0, 1) (0, [3])",
            "agree acked (0, 1)",
            "shrink 0 3",
            "revoked (0, False)",
        ], out + err
    assert by.get(3) == ["size (0, 0, 0)"], out
