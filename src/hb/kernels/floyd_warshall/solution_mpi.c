/* floyd_warshall on MPI under the default plan: rows of paths in balanced bands, N global (the
   rows are kept whole). For each k the owner of row k broadcasts it into the workspace and every
   rank relaxes its own rows through it. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#define HB_FLOYD_WARSHALL_MPI(NAME, T, MPI_T)                                                    \
    void NAME(T *restrict paths, int64_t N, MPI_Comm comm, void *workspace,                      \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t base = N / ranks, longer = N % ranks;                                      \
        const int64_t rows = base + (rank < longer);                                             \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                     \
        T *restrict pk = workspace;                                                              \
        for (int64_t k = 0; k < N; ++k) {                                                        \
            /* the owner of global row k under numpy.array_split's partition */                  \
            const int64_t split = longer * (base + 1);                                           \
            const int owner = (int)(k < split ? k / (base + 1) : longer + (k - split) / base);   \
            if (owner == rank) memcpy(pk, paths + (k - first) * N, (size_t)N * sizeof(T));       \
            MPI_Bcast(pk, (int)N, MPI_T, owner, comm);                                           \
            for (int64_t i = 0; i < rows; ++i) {                                                 \
                T *restrict pi = paths + i * N;                                                  \
                const T through = pi[k];                                                         \
                for (int64_t j = 0; j < N; ++j) {                                                \
                    const T candidate = through + pk[j];                                         \
                    pi[j] = candidate < pi[j] ? candidate : pi[j];                               \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_FLOYD_WARSHALL_MPI(floyd_warshall_mpi_fp64, double, MPI_DOUBLE)
HB_FLOYD_WARSHALL_MPI(floyd_warshall_mpi_fp32, float, MPI_FLOAT)
