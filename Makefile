# SPDX-License-Identifier: GPL-2.0
#
# user_events.ko: tracefs user_events for kernels built without
# CONFIG_USER_EVENTS.
#
#   make                      build user_events.ko for the running kernel
#   make KDIR=/lib/modules/<release>/build
#                             build it for another installed kernel
#   make check                build and run the selftests in QEMU guests
#   make demo                 boot a guest and show an event in the trace
#
# The test and packaging targets live in mk/*.mk.

KDIR ?= /lib/modules/$(shell uname -r)/build
# Not VERSION: that name is the kernel Makefile's own (Kbuild reads it).
UE_VERSION := $(shell cat VERSION)
PWD := $(CURDIR)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || true
	rm -rf build

.PHONY: all modules clean

-include $(sort $(wildcard mk/*.mk))
