# SPDX-License-Identifier: GPL-2.0
#
# Reliability targets (included by the top-level Makefile):
#   make stress [STRESS_S=120] [STRESS_SEED=n] [KVERS="rel ..."]
#                        random concurrent operations in a -smp 2 guest per
#                        kernel, then invariant checks (tests/stress/run.sh)
#   make race [RACE_S=20] [RACE_SEED=n] [RACE_ACCEL=tcg] [KVERS="rel ..."]
#                        concurrency fuzzer: threads and processes on a
#                        few shared event names, rmmod/insmod in parallel,
#                        in a -smp 2 guest per kernel (tests/race/run.sh)
#   make race-selftests [RACE_ACCEL=tcg] [RACE_TESTS="name ..."]
#                        tests/selftests/races_test alone, vCPUs in parallel
#                        (tests/race/selftests.sh)
#   make fuzz [FUZZ_S=60] [FUZZ_SEED=n] [KVERS="rel ..."]
#                        structure-aware fuzzing of the ioctl/write/
#                        dynamic_events interfaces in a guest (tests/fuzz/run.sh)
#   make fuzz-regress    replay tests/fuzz/regressions/ (tests/fuzz/regress.sh)
#   make check-debug     selftests, stress and fuzz regressions on a
#                        KASAN/lockdep/kmemleak 6.12 kernel built once
#                        (scripts/debug-kernel.sh)
#   make check-kcsan     the same on a KCSAN/lockdep 6.12 kernel; data race
#                        reports through the module fail the run
#   make debug-kernel    only build that kernel (cached)
# All end with "N passed, N failed". They build into build/robust/ (own
# lock), so they can run while `make check` uses build/.

.PHONY: stress race race-selftests fuzz fuzz-regress check-debug check-kcsan debug-kernel

stress:
	@tests/stress/run.sh

race:
	@tests/race/run.sh

race-selftests:
	@tests/race/selftests.sh

fuzz:
	@tests/fuzz/run.sh

fuzz-regress:
	@tests/fuzz/regress.sh

check-debug:
	@scripts/debug-kernel.sh all

check-kcsan:
	@UE_DEBUG_FLAVOR=kcsan scripts/debug-kernel.sh all

debug-kernel:
	@scripts/debug-kernel.sh build
