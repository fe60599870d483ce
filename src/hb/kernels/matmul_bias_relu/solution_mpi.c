/* matmul_bias_relu on MPI: each rank computes Y = relu(X W^T + b) for its own rows of X with the
   replicated W and b; N arrives local, so no communication is needed. */
#include <mpi.h>
#include <stdint.h>

#define HB_MATMUL_BIAS_RELU_MPI(NAME, T)                                                       \
    void NAME(const T *restrict X, const T *restrict W, const T *restrict b, T *restrict Y,    \
              int64_t N, int64_t K, int64_t M, MPI_Comm comm, void *workspace,                 \
              int64_t workspace_bytes) {                                                       \
        (void)comm;                                                                            \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t i = 0; i < N; ++i) {                                                      \
            const T *restrict x = X + i * K;                                                   \
            for (int64_t j = 0; j < M; ++j) {                                                  \
                const T *restrict w = W + j * K;                                               \
                T acc = 0;                                                                     \
                _Pragma("omp simd reduction(+ : acc)")                                         \
                for (int64_t k = 0; k < K; ++k) acc += x[k] * w[k];                            \
                acc += b[j];                                                                   \
                Y[i * M + j] = acc > 0 ? acc : 0;                                              \
            }                                                                                  \
        }                                                                                      \
    }

HB_MATMUL_BIAS_RELU_MPI(matmul_bias_relu_mpi_fp64, double)
HB_MATMUL_BIAS_RELU_MPI(matmul_bias_relu_mpi_fp32, float)
