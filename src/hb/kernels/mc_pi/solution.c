/* mc_pi: every thread counts the hits of its share of the points, drawn by splitmix64 of each
 * point's two counters under the key, and the counts are summed by an OpenMP reduction. */
#include <stdint.h>

static inline uint64_t hb_splitmix64(uint64_t key, uint64_t counter) {
    uint64_t z = key + (counter + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int64_t hb_hits(uint64_t key, int64_t first, int64_t last) {
    int64_t hits = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : hits)
    for (int64_t i = first; i < last; ++i) {
        const uint64_t x = hb_splitmix64(key, 2 * (uint64_t)i) >> 33;
        const uint64_t y = hb_splitmix64(key, 2 * (uint64_t)i + 1) >> 33;
        hits += x * x + y * y < (UINT64_C(1) << 62);
    }
    return hits;
}

void mc_pi_fp64(const int64_t *restrict key, double *restrict estimate, int64_t N,
                void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    estimate[0] = 4.0 * (double)hb_hits((uint64_t)key[0], 0, N) / (double)N;
}

void mc_pi_fp32(const int64_t *restrict key, float *restrict estimate, int64_t N,
                void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    estimate[0] = (float)(4.0 * (double)hb_hits((uint64_t)key[0], 0, N) / (double)N);
}
