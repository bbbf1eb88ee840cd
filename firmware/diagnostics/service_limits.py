"""The service tests' names, defaults and limits (what ``mjtable diag --help`` shows without loading them)."""

GROUP_TESTS = ("disk", "stackers", "lifts", "center", "dice")
DISK_JOG_S = 3.0
DISK_JOG_MAX_S = 30.0
LEARN_RUNS = 5
LEARN_RUNS_MAX = 9
BURN_IN_CYCLES = 10
BURN_IN_CYCLES_MAX = 1000
