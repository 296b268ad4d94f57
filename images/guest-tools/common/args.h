/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Number arguments as the test tools read them: strtoul(s, NULL, 0), so
 * that 0x... is hex, and unchecked: the scripts that call the tools pass
 * numbers. (tgrcheck and tgrbench refuse what is not a number, with
 * tgrtool's arg_u32().)
 */
#ifndef VC_GUEST_ARGS_H
#define VC_GUEST_ARGS_H

#include <stdint.h>
#include <stdlib.h>

static inline uint32_t arg_num(const char *s)
{
	return strtoul(s, NULL, 0);
}

/* argv[i] as a number, or def when there are fewer arguments. */
static inline uint32_t arg_or(int argc, char **argv, int i, uint32_t def)
{
	return i < argc ? arg_num(argv[i]) : def;
}

#endif /* VC_GUEST_ARGS_H */
