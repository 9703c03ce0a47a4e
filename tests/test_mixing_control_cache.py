"""chapters/mixing_and_tempering reads its control runs from chapters/data.

``tools/mixing_control.py`` (``make mixing``) writes them; these tests re-derive their first
updates with the script's own code.  The run is deterministic (the exact gradient, no draws) and not
chaotic: a 1e-12 nudge of its first starting weight moves the log-likelihood by at most 2.1e-12
relative over the whole 6000 updates (measured November 2026), so rtol 1e-9 leaves a factor 500
for another processor's rounding.  The PCD runs at constant rates draw, but a draw changes only
where a uniform number falls within rounding of a probability: a 1e-12 nudge moved the first
500 updates of PCD-1 at rate 0.05 by 3e-15 relative, and the means of the last ten checkpoints
of whole runs (rate 0.05, initialisations 1 and 2) not at all at four decimals; rtol 1e-9 again.
"""

import numpy as np
import pytest

from tool_scripts import assert_close, load_tool, read_cache


def test_cache_rederives_the_first_updates():
    tool = load_tool("mixing_control")
    stored = read_cache("mixing_control")
    assert stored["updates"] == tool.UPDATES and stored["rate"] == tool.RATE
    assert len(stored["exact_ascent_log_likelihood"]) == tool.UPDATES // tool.CHUNK + 1
    fresh = tool.run(tool.CHECK_UPDATES)
    assert_close(fresh, np.array(stored["exact_ascent_log_likelihood"])[:len(fresh)],
                 "log-likelihood", rtol=1e-9)


@pytest.mark.parametrize("rate,init,seed", [(0.05, 1, 1), (0.1, 2, 5)])
def test_cache_rederives_the_first_updates_of_a_constant_rate_run(rate, init, seed):
    tool = load_tool("mixing_control")
    stored = read_cache("mixing_control")["constant_rates"]
    assert sorted(stored) == sorted(str(r) for r in tool.CONSTANT_RATES)
    assert all(sorted(runs) == sorted(f"{i}-{s}" for i in tool.INITS for s in tool.SEEDS)
               for runs in stored.values())
    fresh = tool.constant_run(rate, init, seed, tool.CHECK_UPDATES)
    assert_close(fresh, np.array(stored[str(rate)][f"{init}-{seed}"])[:len(fresh)],
                 "log-likelihood", rtol=1e-9)
