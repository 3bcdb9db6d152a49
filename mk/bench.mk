# SPDX-License-Identifier: GPL-2.0
#
# Benchmark targets (included by the top-level Makefile):
#   make bench [KVERS="rel ..."] [V=1]
#                       build the module and bench/ue_bench.c, boot each
#                       kernel under QEMU -icount (path lengths) and plain
#                       TCG -smp 2 (wall-clock ratios, memory), write
#                       bench/results/ and the results of bench/README.md
#   make bench-report   redo bench/results/*.md, chart.png and the README
#                       block from the saved bench/results/*.log

.PHONY: bench bench-report

bench:
	@bench/run.sh

BENCH_KERNELS = $(sort $(patsubst bench/results/%.icount.log,%,$(wildcard bench/results/*.icount.log)))
bench-report:
	/usr/bin/python3 bench/report.py --out bench/results --readme bench/README.md \
		--meta "$$(grep -h -m1 '^Measured ' bench/results/*.md | head -n 1)" \
		$(foreach k,$(BENCH_KERNELS),'$(k)=bench/results/$(k).icount.log,$(wildcard bench/results/$(k).scale.log),$(wildcard bench/results/$(k).tcg.log)')
