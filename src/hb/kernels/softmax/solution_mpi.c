/* softmax on MPI: each rank normalises its own rows (x and y split by rows, D kept whole, so N
   arrives local and no communication is needed). */
#include <mpi.h>
#include <stdint.h>
#include <tgmath.h>

#define HB_SOFTMAX_MPI(NAME, T)                                                             \
    void NAME(const T *restrict x, T *restrict y, int64_t N, int64_t D, MPI_Comm comm,      \
              void *workspace, int64_t workspace_bytes) {                                   \
        (void)comm;                                                                         \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        _Pragma("omp parallel for schedule(static)")                                        \
        for (int64_t n = 0; n < N; ++n) {                                                   \
            const T *restrict row = x + n * D;                                              \
            T *restrict out = y + n * D;                                                    \
            T peak = row[0];                                                                \
            for (int64_t d = 1; d < D; ++d) peak = row[d] > peak ? row[d] : peak;           \
            T sum = 0;                                                                      \
            for (int64_t d = 0; d < D; ++d) {                                               \
                out[d] = exp(row[d] - peak);                                                \
                sum += out[d];                                                              \
            }                                                                               \
            const T scale = (T)1 / sum;                                                     \
            for (int64_t d = 0; d < D; ++d) out[d] *= scale;                                \
        }                                                                                   \
    }

HB_SOFTMAX_MPI(softmax_mpi_fp64, double)
HB_SOFTMAX_MPI(softmax_mpi_fp32, float)
