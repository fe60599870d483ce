/* fdtd_2d: TMAX Yee steps; in one parallel region the E-field updates share rows among the
   threads, then (after the barrier of the loop) the H-field update reads the new E fields. */
#include <stdint.h>

#define HB_FDTD(NAME, T)                                                                         \
    void NAME(T *restrict ex, T *restrict ey, T *restrict hz, const T *restrict fict,            \
              int64_t NX, int64_t NY, int64_t TMAX, void *workspace, int64_t workspace_bytes) {  \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        const T half = (T)0.5, c = (T)0.7;                                                       \
        _Pragma("omp parallel")                                                                  \
        for (int64_t t = 0; t < TMAX; ++t) {                                                     \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < NX; ++i) {                                                   \
                T *restrict eyr = ey + i * NY, *restrict exr = ex + i * NY;                      \
                const T *restrict h = hz + i * NY;                                               \
                if (i == 0)                                                                      \
                    for (int64_t j = 0; j < NY; ++j) eyr[j] = fict[t];                           \
                else                                                                             \
                    for (int64_t j = 0; j < NY; ++j) eyr[j] = eyr[j] - half * (h[j] - h[j - NY]); \
                for (int64_t j = 1; j < NY; ++j) exr[j] = exr[j] - half * (h[j] - h[j - 1]);     \
            }                                                                                    \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < NX - 1; ++i) {                                               \
                T *restrict h = hz + i * NY;                                                     \
                const T *restrict exr = ex + i * NY, *restrict eyr = ey + i * NY;                \
                for (int64_t j = 0; j < NY - 1; ++j)                                             \
                    h[j] = h[j] - c * (((exr[j + 1] - exr[j]) + eyr[j + NY]) - eyr[j]);          \
            }                                                                                    \
        }                                                                                        \
    }

HB_FDTD(fdtd_2d_fp64, double)
HB_FDTD(fdtd_2d_fp32, float)
