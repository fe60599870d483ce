/* vadv on MPI: the fields split by i-planes (I arrives as the rank's own count) and wcon, staggered
 * in i, replicated (I1 = I + 1 arrives global); the columns are independent, so each rank solves
 * its own as the single-node baseline does, reading wcon from its first global plane
 * (numpy.array_split's partition of I1 - 1 planes), with no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_VADV(NAME, T)                                                                           \
    void NAME(T *restrict utens_stage, const T *restrict u_stage, const T *restrict wcon,          \
              const T *restrict u_pos, const T *restrict utens, int64_t I, int64_t J,              \
              int64_t K, int64_t I1, T dtr_stage, MPI_Comm comm, void *workspace,                  \
              int64_t workspace_bytes) {                                                           \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int64_t planes = I1 - 1, base = planes / ranks, longer = planes % ranks;             \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                       \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T bet_m = (T)0.5, bet_p = (T)0.5, quarter = (T)0.25;                                 \
        _Pragma("omp parallel for collapse(2) schedule(static)")                                   \
        for (int64_t i = 0; i < I; ++i) {                                                          \
            for (int64_t j = 0; j < J; ++j) {                                                      \
                T ccol[K], dcol[K];                                                                \
                const int64_t at = (i * J + j) * K;                                                \
                const T *w0 = wcon + at + first * J * K, *w1 = w0 + J * K;                         \
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

HB_VADV(vadv_mpi_fp64, double)
HB_VADV(vadv_mpi_fp32, float)
