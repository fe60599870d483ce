/* lbm_d2q9: fused collide-and-push steps. Each cell's nine populations are relaxed in registers
   and written to their neighbours' slots in the other buffer (every slot written once, so rows
   share among threads without races); the buffers swap each step and an odd count copies back. */
#include <stdint.h>
#include <string.h>

static const int HB_EX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int HB_EY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};

#define HB_LBM(NAME, T)                                                                          \
    void NAME(T *restrict f, int64_t ny, int64_t nx, int64_t TSTEPS, T omega, void *workspace,   \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        const int64_t cells = ny * nx;                                                           \
        const T w[9] = {(T)(4.0 / 9.0),  (T)(1.0 / 9.0),  (T)(1.0 / 9.0),                        \
                        (T)(1.0 / 9.0),  (T)(1.0 / 9.0),  (T)(1.0 / 36.0),                       \
                        (T)(1.0 / 36.0), (T)(1.0 / 36.0), (T)(1.0 / 36.0)};                      \
        T *bufs[2] = {f, (T *)workspace};                                                        \
        _Pragma("omp parallel")                                                                  \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                   \
            const T *restrict src = bufs[t & 1];                                                 \
            T *restrict dst = bufs[(t + 1) & 1];                                                 \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t j = 0; j < ny; ++j) {                                                   \
                int64_t rows[3]; /* the destination row for e_y = -1, 0, +1 */                   \
                rows[0] = (j == 0 ? ny - 1 : j - 1) * nx;                                        \
                rows[1] = j * nx;                                                                \
                rows[2] = (j == ny - 1 ? 0 : j + 1) * nx;                                        \
                for (int64_t i = 0; i < nx; ++i) {                                               \
                    int64_t cols[3];                                                             \
                    cols[0] = i == 0 ? nx - 1 : i - 1;                                           \
                    cols[1] = i;                                                                 \
                    cols[2] = i == nx - 1 ? 0 : i + 1;                                           \
                    T p[9];                                                                      \
                    for (int k = 0; k < 9; ++k) p[k] = src[k * cells + j * nx + i];              \
                    T rho = p[0];                                                                \
                    for (int k = 1; k < 9; ++k) rho += p[k];                                     \
                    const T ux = ((p[1] + p[5]) + p[8] - ((p[3] + p[6]) + p[7])) / rho;          \
                    const T uy = ((p[2] + p[5]) + p[6] - ((p[4] + p[7]) + p[8])) / rho;          \
                    const T usq = ux * ux + uy * uy;                                             \
                    for (int k = 0; k < 9; ++k) {                                                \
                        const T eu = (T)HB_EX[k] * ux + (T)HB_EY[k] * uy;                        \
                        const T eq = (w[k] * rho)                                                \
                                     * ((((T)1.0 + (T)3.0 * eu) + ((T)4.5 * eu) * eu)            \
                                        - (T)1.5 * usq);                                         \
                        dst[k * cells + rows[HB_EY[k] + 1] + cols[HB_EX[k] + 1]] =               \
                            p[k] - omega * (p[k] - eq);                                          \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        if (TSTEPS & 1) memcpy(f, workspace, (size_t)(9 * cells) * sizeof(T));                   \
    }

HB_LBM(lbm_d2q9_fp64, double)
HB_LBM(lbm_d2q9_fp32, float)
