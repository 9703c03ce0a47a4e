"""chapters/mixing_and_tempering reads its exact-ascent control run from chapters/data.

``tools/mixing_control.py`` (``make mixing``) writes it; this test re-derives its first updates
with the script's own code.  The run is deterministic (the exact gradient, no draws) and not
chaotic: a 1e-12 nudge of its first starting weight moves the log-likelihood by at most 2.1e-12
relative over the whole 6000 updates (measured November 2026), so rtol 1e-9 leaves a factor 500
for another processor's rounding.
"""

import numpy as np

from tool_scripts import assert_close, load_tool, read_cache


def test_cache_rederives_the_first_updates():
    tool = load_tool("mixing_control")
    stored = read_cache("mixing_control")
    assert stored["updates"] == tool.UPDATES and stored["rate"] == tool.RATE
    assert len(stored["exact_ascent_log_likelihood"]) == tool.UPDATES // tool.CHUNK + 1
    fresh = tool.run(tool.CHECK_UPDATES)
    assert_close(fresh, np.array(stored["exact_ascent_log_likelihood"])[:len(fresh)],
                 "log-likelihood", rtol=1e-9)
