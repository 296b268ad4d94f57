/*
 * mkimage: wrap a raw MCP image in the firmware file header the driver
 * checks (struct mcp_image_hdr in myri_mcp_if.h).
 *
 *   mkimage [-n NAME] FIRMWARE.elf FIRMWARE.raw OUT.bin
 *
 * The raw image is objcopy's: SRAM from address 0 to the end of the
 * loaded data.  mem_end is the ELF's `_end` symbol (end of bss and stack).
 * Both must stay within MCP_CODE_MAX, where mcp_global begins.  The
 * image is padded to a multiple of 4 bytes, so the driver can copy it in
 * 32-bit writes; the CRC covers the padded image.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "vcluster/fw/myri_mcp_if.h"
#include "vcluster/le.h"

static const char *prog = "mkimage";

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: error: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;

    if (!f) {
        die("%s: %s", path, strerror(errno));
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap + 4);
            if (!buf) {
                die("out of memory");
            }
        }
        size_t got = fread(buf + n, 1, cap - n, f);

        n += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        die("%s: read error", path);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The value of symbol @name in a 32-bit little-endian ELF, or die. */
static uint32_t elf_symbol(const char *path, const char *name)
{
    size_t len;
    uint8_t *elf = read_file(path, &len);
    Elf32_Ehdr eh;

    if (len < sizeof(eh) || memcmp(elf, ELFMAG, SELFMAG) ||
        elf[EI_CLASS] != ELFCLASS32 || elf[EI_DATA] != ELFDATA2LSB) {
        die("%s: not a 32-bit little-endian ELF file", path);
    }
    memcpy(&eh, elf, sizeof(eh));
    if (le16toh(eh.e_shentsize) != sizeof(Elf32_Shdr) ||
        le32toh(eh.e_shoff) + (uint64_t)le16toh(eh.e_shnum) *
        sizeof(Elf32_Shdr) > len) {
        die("%s: bad section table", path);
    }
    for (unsigned i = 0; i < le16toh(eh.e_shnum); i++) {
        Elf32_Shdr sh, strh;

        memcpy(&sh, elf + le32toh(eh.e_shoff) + i * sizeof(sh), sizeof(sh));
        if (le32toh(sh.sh_type) != SHT_SYMTAB ||
            le32toh(sh.sh_link) >= le16toh(eh.e_shnum)) {
            continue;
        }
        memcpy(&strh, elf + le32toh(eh.e_shoff) +
               le32toh(sh.sh_link) * sizeof(strh), sizeof(strh));
        uint32_t off = le32toh(sh.sh_offset), size = le32toh(sh.sh_size);
        uint32_t stroff = le32toh(strh.sh_offset);
        uint32_t strsize = le32toh(strh.sh_size);

        if ((uint64_t)off + size > len || (uint64_t)stroff + strsize > len) {
            die("%s: bad symbol table", path);
        }
        for (uint32_t s = 0; s + sizeof(Elf32_Sym) <= size;
             s += sizeof(Elf32_Sym)) {
            Elf32_Sym sym;

            memcpy(&sym, elf + off + s, sizeof(sym));
            uint32_t n = le32toh(sym.st_name);

            if (n < strsize &&
                strnlen((char *)elf + stroff + n, strsize - n) <
                strsize - n &&
                !strcmp((char *)elf + stroff + n, name)) {
                uint32_t v = le32toh(sym.st_value);

                free(elf);
                return v;
            }
        }
    }
    die("%s: no symbol '%s' (not linked with mcp.ld?)", path, name);
    return 0;
}

int main(int argc, char **argv)
{
    const char *name = "mcp";
    struct mcp_image_hdr hdr;
    uint8_t out_hdr[sizeof(hdr)];
    size_t raw_len, load_size;
    uint8_t *raw;
    uint32_t mem_end;
    char *tmp;
    FILE *f;
    int opt;

    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt != 'n') {
            goto usage;
        }
        name = optarg;
    }
    if (argc - optind != 3) {
        goto usage;
    }
    if (strlen(name) >= sizeof(hdr.name)) {
        die("name '%s' is longer than %zu bytes", name,
            sizeof(hdr.name) - 1);
    }

    mem_end = elf_symbol(argv[optind], "_end");
    raw = read_file(argv[optind + 1], &raw_len);
    load_size = (raw_len + 3) & ~(size_t)3;
    memset(raw + raw_len, 0, load_size - raw_len);
    if (raw_len == 0) {
        die("%s: empty image", argv[optind + 1]);
    }
    if (load_size > MCP_CODE_MAX) {
        die("%s: image of %zu bytes exceeds MCP_CODE_MAX (%u bytes)",
            argv[optind + 1], load_size, MCP_CODE_MAX);
    }
    if (mem_end > MCP_CODE_MAX) {
        die("%s: mem_end 0x%x (image, bss and stack) exceeds MCP_CODE_MAX "
            "(0x%x)", argv[optind], mem_end, MCP_CODE_MAX);
    }
    if (mem_end < load_size) {
        die("%s: mem_end 0x%x below the image's end 0x%zx", argv[optind],
            mem_end, load_size);
    }

    memset(out_hdr, 0, sizeof(out_hdr));
    st_le32(out_hdr + offsetof(struct mcp_image_hdr, magic),
            MCP_IMAGE_MAGIC);
    st_le32(out_hdr + offsetof(struct mcp_image_hdr, abi), MCP_ABI);
    st_le32(out_hdr + offsetof(struct mcp_image_hdr, load_size), load_size);
    st_le32(out_hdr + offsetof(struct mcp_image_hdr, mem_end), mem_end);
    st_le32(out_hdr + offsetof(struct mcp_image_hdr, crc32),
            crc32(0, raw, load_size));
    memcpy(out_hdr + offsetof(struct mcp_image_hdr, name), name,
           strlen(name));

    /* Written whole or not at all: make sees no half file. */
    if (asprintf(&tmp, "%s.tmp", argv[optind + 2]) < 0) {
        die("out of memory");
    }
    f = fopen(tmp, "wb");
    if (!f) {
        die("%s: %s", tmp, strerror(errno));
    }
    if (fwrite(out_hdr, sizeof(out_hdr), 1, f) != 1 ||
        fwrite(raw, load_size, 1, f) != 1 || fclose(f) != 0) {
        unlink(tmp);
        die("%s: write error", tmp);
    }
    if (rename(tmp, argv[optind + 2]) != 0) {
        unlink(tmp);
        die("%s: %s", argv[optind + 2], strerror(errno));
    }
    free(tmp);
    free(raw);
    return 0;

usage:
    fprintf(stderr, "usage: %s [-n NAME] FIRMWARE.elf FIRMWARE.raw OUT.bin\n",
            prog);
    return 2;
}
