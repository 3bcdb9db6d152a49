# SPDX-License-Identifier: GPL-2.0
#
# Used by scripts/check.sh only while selftests/Makefile does not exist:
#   make -C selftests -f ../scripts/selftests-fallback.mk HARNESS_DIR=... OUT=...
# Builds every *_test.c into $(OUT)/<name> and copies every *_test.sh there.

HARNESS_DIR ?= $(error HARNESS_DIR is not set (scripts/setup.sh --harness-dir))
OUT ?= $(CURDIR)/../build/selftests
CC ?= cc
CFLAGS ?= -O2 -g -Wall -D_GNU_SOURCE
CPPFLAGS += -I$(CURDIR)/../include -I$(HARNESS_DIR)
LDLIBS += -lpthread

C_TESTS := $(patsubst %.c,$(OUT)/%,$(wildcard *_test.c))
SH_TESTS := $(patsubst %,$(OUT)/%,$(wildcard *_test.sh))

all: $(C_TESTS) $(SH_TESTS)

$(OUT)/%: %.c | $(OUT)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) $(LDLIBS)

$(OUT)/%.sh: %.sh | $(OUT)
	install -m 755 $< $@

$(OUT):
	mkdir -p $@

.PHONY: all
