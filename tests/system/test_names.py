"""Looking a port or a shared-memory region up by name must not cost more the more names share
its prefix (-icount). The hypervisor compared the caller's name with each of its ports' names
(up to 64) and each region's (up to 64), character by character: with every name 30 characters
long and only the last two differing, a look-up of the last took a pass over nearly all of them
(nameprobe alone on a dedicated core: its call's time is the path). A neighbour can be in such a
call when a victim is due, so it must stay well within the longest path the lateness bound
assumes (test_lateness.py: 300 ticks). Now each name has a key (its length and a hash, made at
boot), and only names with the caller's key are compared."""

import re

from harness import run_system
from test_lateness import LONGEST_PATH_TICKS


def test_looking_up_the_last_of_many_names_with_a_common_prefix_is_short():
    run = run_system("names_alone.yaml", icount=True, timeout=300,
                     until=lambda r: ("probe", "nameprobe_done") in r.verdicts())
    assert ("probe", "nameprobe_done") in run.verdicts(), "nameprobe did not finish"
    assert run.index(r"nameprobe: (port|region)") < 0, "a look-up failed"
    ticks = {m[1]: int(m[2]) for m in
             map(re.compile(r"BHSTAT name_(\w+)_ticks (\d+)").search, run.lines) if m}
    print(f"BHSTAT names_alone: {ticks}")
    # The last costs about what the first does (a look at each key between them: 89 against 66
    # ticks; 1332 against 55 compared name by name); both far within the longest path.
    assert ticks["port_last"] <= ticks["port_first"] + 40, ticks
    assert ticks["shm_last"] <= ticks["shm_first"] + 40, ticks
    assert max(ticks.values()) <= LONGEST_PATH_TICKS // 3, ticks
