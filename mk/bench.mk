# SPDX-License-Identifier: GPL-2.0
#
# Benchmark targets (included by the top-level Makefile):
#   make bench [KVERS="rel ..."] [V=1]
#                       build the module and tests/bench/ue_bench.c, boot each
#                       kernel under QEMU -icount (path lengths) and plain
#                       TCG -smp 2 (wall-clock ratios, memory), write
#                       tests/bench/results/ and the results of tests/bench/README.md
#   make bench-report   redo tests/bench/results/*.md, chart.png and the README
#                       block from the saved tests/bench/results/*.log

.PHONY: bench bench-report

bench:
	@tests/bench/run.sh

BENCH_KERNELS = $(sort $(patsubst tests/bench/results/%.icount.log,%,$(wildcard tests/bench/results/*.icount.log)))
bench-report:
	/usr/bin/python3 tests/bench/report.py --out tests/bench/results --readme tests/bench/README.md \
		--meta "$$(grep -h -m1 '^Measured ' tests/bench/results/*.md | head -n 1)" \
		$(foreach k,$(BENCH_KERNELS),'$(k)=tests/bench/results/$(k).icount.log,$(wildcard tests/bench/results/$(k).scale.log),$(wildcard tests/bench/results/$(k).tcg.log)')
