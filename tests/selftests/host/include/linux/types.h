/* SPDX-License-Identifier: GPL-2.0 */
/* Host build of the code analysis (tests/selftests/host): the kernel types used */
#ifndef _HOST_LINUX_TYPES_H
#define _HOST_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int32_t s32;
#endif
