/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's linux/kernel.h: nothing the host build needs */
