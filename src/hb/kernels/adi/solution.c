/* adi: TSTEPS ADI steps. The elimination coefficients p are the same for every line (each starts
   from p = 0), so each sweep computes them once; the column sweep then runs its recurrence down the
   rows with the lines (columns) innermost, contiguous and shared among threads in bands, and the
   row sweep gives each thread whole rows. v, p and q live in the workspace. */
#include <stdint.h>

#define HB_ADI(NAME, T)                                                                          \
    void NAME(T *restrict u, int64_t N, int64_t TSTEPS, void *workspace,                         \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        T *restrict v = (T *)workspace;                                                          \
        T *restrict q = v + N * N;                                                               \
        T *restrict p = q + N * N;                                                               \
        const T one = (T)1.0, two = (T)2.0;                                                      \
        const T dx = one / (T)N, dy = one / (T)N, dt = one / (T)TSTEPS;                          \
        const T mul1 = two * dt / (dx * dx), mul2 = one * dt / (dy * dy);                        \
        const T a = -mul1 / two, b = one + mul1, c = a;                                          \
        const T d = -mul2 / two, e = one + mul2, f = d;                                          \
        T *restrict pc = p, *restrict pr = p + N;                                                \
        pc[0] = pr[0] = (T)0.0;                                                                  \
        for (int64_t j = 1; j < N - 1; ++j) {                                                    \
            pc[j] = -c / (a * pc[j - 1] + b);                                                    \
            pr[j] = -f / (d * pr[j - 1] + e);                                                    \
        }                                                                                        \
        _Pragma("omp parallel")                                                                  \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                   \
            /* column sweep: q[j][i] and v[j][i], the lines i innermost */                      \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 1; i < N - 1; ++i) {                                                \
                v[i] = one;                                                                      \
                q[i] = one;                                                                      \
                v[(N - 1) * N + i] = one;                                                        \
            }                                                                                    \
            for (int64_t j = 1; j < N - 1; ++j) {                                                \
                const T den = a * pc[j - 1] + b;                                                 \
                const T *restrict ur = u + j * N;                                                \
                T *restrict qr = q + j * N;                                                      \
                _Pragma("omp for schedule(static) nowait")                                       \
                for (int64_t i = 1; i < N - 1; ++i)                                              \
                    qr[i] = (-d * ur[i - 1] + (one + two * d) * ur[i] - f * ur[i + 1]            \
                             - a * qr[i - N]) / den;                                             \
            }                                                                                    \
            for (int64_t j = N - 2; j >= 1; --j) {                                               \
                const T pj = pc[j];                                                              \
                T *restrict vr = v + j * N;                                                      \
                const T *restrict qr = q + j * N;                                                \
                _Pragma("omp for schedule(static) nowait")                                       \
                for (int64_t i = 1; i < N - 1; ++i) vr[i] = pj * vr[i + N] + qr[i];              \
            }                                                                                    \
            _Pragma("omp barrier")                                                               \
            /* row sweep: each row i of u a line, q[i][j] along it */                           \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 1; i < N - 1; ++i) {                                                \
                T *restrict ur = u + i * N;                                                      \
                T *restrict qr = q + i * N;                                                      \
                const T *restrict vm = v + (i - 1) * N, *restrict v0 = v + i * N,                \
                                  *restrict vp = v + (i + 1) * N;                                \
                ur[0] = one;                                                                     \
                qr[0] = one;                                                                     \
                for (int64_t j = 1; j < N - 1; ++j)                                              \
                    qr[j] = (-a * vm[j] + (one + two * a) * v0[j] - c * vp[j] - d * qr[j - 1])   \
                            / (d * pr[j - 1] + e);                                               \
                ur[N - 1] = one;                                                                 \
                for (int64_t j = N - 2; j >= 1; --j) ur[j] = pr[j] * ur[j + 1] + qr[j];          \
            }                                                                                    \
        }                                                                                        \
    }

HB_ADI(adi_fp64, double)
HB_ADI(adi_fp32, float)
