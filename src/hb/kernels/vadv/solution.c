/* vadv: one (i, j) column per iteration of an OpenMP loop over i and j; each column's K levels are
 * contiguous, its forward sweep keeps c and d in arrays on the thread's stack, and the backward
 * substitution writes utens_stage in place. */
#include <stdint.h>

#define HB_VADV(NAME, T)                                                                           \
    void NAME(T *restrict utens_stage, const T *restrict u_stage, const T *restrict wcon,          \
              const T *restrict u_pos, const T *restrict utens, int64_t I, int64_t J,              \
              int64_t K, int64_t I1, T dtr_stage, void *workspace, int64_t workspace_bytes) {      \
        (void)I1;                                                                                  \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T bet_m = (T)0.5, bet_p = (T)0.5, quarter = (T)0.25;                                 \
        _Pragma("omp parallel for collapse(2) schedule(static)")                                   \
        for (int64_t i = 0; i < I; ++i) {                                                          \
            for (int64_t j = 0; j < J; ++j) {                                                      \
                T ccol[K], dcol[K];                                                                \
                const int64_t at = (i * J + j) * K;                                                \
                const T *w0 = wcon + at, *w1 = wcon + at + J * K;                                  \
                const T *u = u_stage + at;                                                         \
                T prev_c = 0, prev_d = 0;                                                          \
                for (int64_t k = 0; k < K; ++k) {                                                  \
                    T a = 0, c = 0, correction = 0;                                                \
                    if (k > 0) {                                                                   \
                        const T gav = -quarter * (w1[k] + w0[k]);                                  \
                        a = gav * bet_p;                                                           \
                        correction -= gav * bet_m * (u[k - 1] - u[k]);                             \
                    }                                                                              \
                    if (k < K - 1) {                                                               \
                        const T gcv = quarter * (w1[k + 1] + w0[k + 1]);                           \
                        c = gcv * bet_p;                                                           \
                        correction -= gcv * bet_m * (u[k + 1] - u[k]);                             \
                    }                                                                              \
                    const T b = dtr_stage - a - c;                                                 \
                    const T d = dtr_stage * u_pos[at + k] + utens[at + k] +                        \
                                utens_stage[at + k] + correction;                                  \
                    const T divided = (T)1 / (b - prev_c * a);                                     \
                    prev_d = (d - prev_d * a) * divided;                                           \
                    prev_c = c * divided;                                                          \
                    ccol[k] = prev_c;                                                              \
                    dcol[k] = prev_d;                                                              \
                }                                                                                  \
                T data = dcol[K - 1];                                                              \
                utens_stage[at + K - 1] = dtr_stage * (data - u_pos[at + K - 1]);                  \
                for (int64_t k = K - 2; k >= 0; --k) {                                             \
                    data = dcol[k] - ccol[k] * data;                                               \
                    utens_stage[at + k] = dtr_stage * (data - u_pos[at + k]);                      \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

HB_VADV(vadv_fp64, double)
HB_VADV(vadv_fp32, float)
