/* Zeroed buffers of tensor size, backed by 2 MiB pages where the kernel allows it (ref/bigbuf.c).
 *
 * Why: on these virtual machines a page fault costs ~12 us (measured: touching 256 MiB of fresh
 * 4 KiB pages takes 0.8 s, of 2 MiB pages 0.05 s once the guest's memory is warm); a 4096 x 4096
 * `resnorm check` touches ~0.8 GB of fresh buffers (inputs and outputs held as doubles, bounds,
 * scratch), which was a third of its CPU time (specs/fast-path.md, section 9).  Linux's
 * transparent huge pages are set to "madvise" on Debian: a buffer gets 2 MiB pages only when
 * asked, aligned to 2 MiB and madvise(MADV_HUGEPAGE).
 *
 * The buffer is calloc's (free() releases it; zero without a memset: a block this large is a fresh
 * mmap), with madvise(MADV_HUGEPAGE) on its 2 MiB-aligned interior when it has RN_BIGBUF_MIN bytes
 * or more.  Measured on 256 MiB touched once: 1.0 s on 4 KiB pages, 0.03-0.08 s on 2 MiB pages. */
#ifndef RESNORM_BIGBUF_H
#define RESNORM_BIGBUF_H

#include <stddef.h>

#define RN_BIGBUF_PAGE ((size_t)2 << 20)
#define RN_BIGBUF_MIN ((size_t)4 << 20)
/* From 1 MiB up to RN_BIGBUF_MIN a buffer is allocated 2 MiB-aligned in whole 2 MiB pages: a
   streaming eval's per-thread block buffers (341 rows of 768 doubles: 2 MiB each at 1024 x 768)
   had ~1,900 page faults, most of a small eval's time (rn_bigbuf_calloc). */
#define RN_BIGBUF_ALIGNED_MIN ((size_t)1 << 20)

/* count * size zeroed bytes (count or size 0: one byte), or NULL (out of memory or overflow). */
void *rn_bigbuf_calloc(size_t count, size_t size);

/* Asks for 2 MiB pages on the 2 MiB-aligned interior of the n bytes at p when n >= RN_BIGBUF_MIN
   (a hint; nothing for NULL or a smaller block).  Also applied to FLINT's allocations (Arb's balls:
   cli/memlimit.c). */
void rn_bigbuf_hint(void *p, size_t n);

#endif
