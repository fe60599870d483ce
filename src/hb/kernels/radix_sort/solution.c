/* radix_sort: LSD radix sort over eight 8-bit digits of the key with its sign bit flipped (so the
 * unsigned order is the signed one). Each pass: every thread counts the digits of its contiguous
 * chunk, an exclusive scan over (digit, thread) gives every thread its first slot per digit, and
 * each thread scatters its chunk in order, which keeps the pass stable. The passes alternate
 * between `sorted` and the workspace, and an even count of them ends in `sorted`. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#define HB_RADIX 256
#define HB_SIGN (UINT64_C(1) << 63)

static void hb_radix_sort(const int64_t *restrict keys, int64_t *restrict sorted, int64_t N,
                          int64_t *restrict spare) {
    int threads = omp_get_max_threads();
    int64_t *offsets = (int64_t *)malloc(sizeof(int64_t) * HB_RADIX * (size_t)threads);
    if (offsets == NULL) return;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        const int64_t first = N * t / team, last = N * (t + 1) / team;
        const uint64_t *src = (const uint64_t *)keys;
        for (int pass = 0; pass < 8; ++pass) {
            uint64_t *dst = (uint64_t *)(pass % 2 == 0 ? spare : sorted);
            const int shift = 8 * pass;
            int64_t *mine = offsets + (size_t)HB_RADIX * t;
            for (int d = 0; d < HB_RADIX; ++d) mine[d] = 0;
            for (int64_t i = first; i < last; ++i) ++mine[((src[i] ^ HB_SIGN) >> shift) & 0xFF];
#pragma omp barrier
#pragma omp single
            {
                int64_t slot = 0;
                for (int d = 0; d < HB_RADIX; ++d) {
                    for (int u = 0; u < team; ++u) {
                        const int64_t count = offsets[(size_t)HB_RADIX * u + d];
                        offsets[(size_t)HB_RADIX * u + d] = slot;
                        slot += count;
                    }
                }
            }
            for (int64_t i = first; i < last; ++i) {
                const uint64_t key = src[i];
                dst[mine[((key ^ HB_SIGN) >> shift) & 0xFF]++] = key;
            }
#pragma omp barrier
            src = dst;
        }
    }
    free(offsets);
}

void radix_sort_fp64(const int64_t *restrict keys, int64_t *restrict sorted, int64_t N,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace_bytes;
    hb_radix_sort(keys, sorted, N, (int64_t *)workspace);
}
