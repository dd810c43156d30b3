#ifndef RSPROF_UTIL_UNWIND_ELF_CFI_H
#define RSPROF_UTIL_UNWIND_ELF_CFI_H

#include <gelf.h>

#include "util/unwind/cfi.h"

/*
 * The CFI of an ELF file as its code sees it at link-time addresses
 * (util/unwind/cfi.h): its .eh_frame_hdr (PT_GNU_EH_FRAME) read in the
 * file's bytes, reads bounded to the load segment that holds it (which
 * holds .eh_frame too: checked), the code its executable segments.
 * -ENOENT: none to read.
 */
int elf_cfi__load(Elf *elf, struct cfi_module *out);

#endif
