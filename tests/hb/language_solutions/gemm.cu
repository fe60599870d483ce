// gemm on a CUDA device: C <- alpha * A B + beta * C, one thread per element of C, the k loop
// staged through shared-memory tiles of A and B.
#include <stdint.h>

#define TILE 16

__global__ void gemm_kernel(const double *A, const double *B, double *C, int64_t NI, int64_t NJ,
                            int64_t NK, double alpha, double beta) {
    __shared__ double a_tile[TILE][TILE];
    __shared__ double b_tile[TILE][TILE];
    const int64_t i = blockIdx.y * (int64_t)TILE + threadIdx.y;
    const int64_t j = blockIdx.x * (int64_t)TILE + threadIdx.x;
    double sum = 0.0;
    for (int64_t k0 = 0; k0 < NK; k0 += TILE) {
        const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        a_tile[threadIdx.y][threadIdx.x] = (i < NI && ka < NK) ? A[i * NK + ka] : 0.0;
        b_tile[threadIdx.y][threadIdx.x] = (kb < NK && j < NJ) ? B[kb * NJ + j] : 0.0;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
        __syncthreads();
    }
    if (i < NI && j < NJ) C[i * NJ + j] = beta * C[i * NJ + j] + alpha * sum;
}

extern "C" void gemm_fp64(const double *__restrict__ A, const double *__restrict__ B,
                          double *__restrict__ C, int64_t NI, int64_t NJ, int64_t NK, double alpha,
                          double beta, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    if (NI <= 0 || NJ <= 0) return;
    const dim3 block(TILE, TILE);
    const dim3 grid((unsigned)((NJ + TILE - 1) / TILE), (unsigned)((NI + TILE - 1) / TILE));
    gemm_kernel<<<grid, block>>>(A, B, C, NI, NJ, NK, alpha, beta);
}
