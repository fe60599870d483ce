/* syrk on MPI under the default plan: rows of C in balanced bands, A replicated; N arrives global
   (C's rows are kept whole). Each rank updates the lower-triangle entries of its own rows; no
   communication is needed. */
#include <mpi.h>
#include <stdint.h>

#define HB_DOT(NAME, T)                                                                          \
    /* not inlined: GCC 12 at -O3 vectorises the loops around an inlined simd reduction badly */ \
    __attribute__((noinline)) static T NAME(const T *restrict a, const T *restrict b,            \
                                            int64_t n) {                                         \
        T sum = 0;                                                                               \
        _Pragma("omp simd reduction(+ : sum)")                                                   \
        for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k];                                      \
        return sum;                                                                              \
    }

#define HB_SYRK_MPI(NAME, T)                                                                     \
    HB_DOT(NAME##_dot, T)                                                                        \
    void NAME(T *restrict C, const T *restrict A, int64_t N, int64_t M, T alpha, T beta,         \
              MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t base = N / ranks, longer = N % ranks;                                      \
        const int64_t rows = base + (rank < longer);                                             \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                     \
        _Pragma("omp parallel for schedule(dynamic, 4)")                                         \
        for (int64_t r = 0; r < rows; ++r) {                                                     \
            const int64_t i = first + r;                                                         \
            for (int64_t j = 0; j <= i; ++j)                                                     \
                C[r * N + j] = beta * C[r * N + j]                                               \
                               + alpha * NAME##_dot(A + i * M, A + j * M, M);                    \
        }                                                                                        \
    }

HB_SYRK_MPI(syrk_mpi_fp64, double)
HB_SYRK_MPI(syrk_mpi_fp32, float)
