/* cavity_flow: per step the pressure source b and copies of u and v, nit Jacobi sweeps of the
   pressure between p and a second buffer (boundary conditions applied to each new iterate in
   order), then the momentum update; rows shared among the threads of one parallel region. The
   workspace holds b, the second pressure buffer and the old u and v. */
#include <stdint.h>
#include <string.h>

#define AT(f, j, i) f[(j) * nx + (i)]

#define HB_CAVITY(NAME, T)                                                                         \
    static void NAME##_bounds(T *restrict p, int64_t ny, int64_t nx) {                             \
        for (int64_t j = 0; j < ny; ++j) AT(p, j, nx - 1) = AT(p, j, nx - 2);                      \
        memcpy(&AT(p, 0, 0), &AT(p, 1, 0), (size_t)nx * sizeof(T));                                \
        for (int64_t j = 0; j < ny; ++j) AT(p, j, 0) = AT(p, j, 1);                                \
        for (int64_t i = 0; i < nx; ++i) AT(p, ny - 1, i) = (T)0.0;                                \
    }                                                                                              \
    void NAME(T *restrict u, T *restrict v, T *restrict p, int64_t ny, int64_t nx,                 \
              int64_t TSTEPS, int64_t nit, T dt, T dx, T dy, T rho, T nu, void *workspace,         \
              int64_t workspace_bytes) {                                                           \
        (void)workspace_bytes;                                                                     \
        const int64_t cells = ny * nx;                                                             \
        T *restrict b = (T *)workspace;                                                            \
        T *restrict other = b + cells;                                                             \
        T *restrict un = other + cells;                                                            \
        T *restrict vn = un + cells;                                                               \
        const T two = (T)2.0, dx2 = dx * dx, dy2 = dy * dy, inv_dt = (T)1.0 / dt;                  \
        const T two_dx = two * dx, two_dy = two * dy;                                              \
        const T inv_2sum = (T)1.0 / (two * (dx2 + dy2));                                           \
        const T b_factor = dx2 * dy2 / (two * (dx2 + dy2));                                        \
        const T cx = dt / dx, cy = dt / dy, cxx = dt / dx2, cyy = dt / dy2;                        \
        const T cpx = dt / (two * rho * dx), cpy = dt / (two * rho * dy);                          \
        T *bufs[2] = {p, other};                                                                   \
        _Pragma("omp parallel")                                                                    \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t j = 0; j < ny; ++j) {                                                     \
                memcpy(&AT(un, j, 0), &AT(u, j, 0), (size_t)nx * sizeof(T));                       \
                memcpy(&AT(vn, j, 0), &AT(v, j, 0), (size_t)nx * sizeof(T));                       \
                if (j == 0 || j == ny - 1) continue;                                               \
                for (int64_t i = 1; i < nx - 1; ++i) {                                             \
                    const T dudx = (AT(u, j, i + 1) - AT(u, j, i - 1)) / two_dx;                   \
                    const T dvdy = (AT(v, j + 1, i) - AT(v, j - 1, i)) / two_dy;                   \
                    const T dudy = (AT(u, j + 1, i) - AT(u, j - 1, i)) / two_dy;                   \
                    const T dvdx = (AT(v, j, i + 1) - AT(v, j, i - 1)) / two_dx;                   \
                    AT(b, j, i) = rho * (((inv_dt * (dudx + dvdy) - dudx * dudx)                   \
                                          - two * (dudy * dvdx)) - dvdy * dvdy);                   \
                }                                                                                  \
            }                                                                                      \
            for (int64_t q = 0; q < nit; ++q) {                                                    \
                const T *restrict pn = bufs[q & 1];                                                \
                T *restrict pw = bufs[(q + 1) & 1];                                                \
                _Pragma("omp for schedule(static)")                                                \
                for (int64_t j = 1; j < ny - 1; ++j)                                               \
                    for (int64_t i = 1; i < nx - 1; ++i)                                           \
                        AT(pw, j, i) = ((AT(pn, j, i + 1) + AT(pn, j, i - 1)) * dy2                \
                                        + (AT(pn, j + 1, i) + AT(pn, j - 1, i)) * dx2)             \
                                           * inv_2sum                                              \
                                       - b_factor * AT(b, j, i);                                   \
                _Pragma("omp single")                                                              \
                NAME##_bounds(pw, ny, nx);                                                         \
            }                                                                                      \
            _Pragma("omp single")                                                                  \
            if (nit & 1) memcpy(p, other, (size_t)cells * sizeof(T));                              \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t j = 1; j < ny - 1; ++j)                                                   \
                for (int64_t i = 1; i < nx - 1; ++i) {                                             \
                    const T um = AT(un, j, i), vm = AT(vn, j, i);                                  \
                    AT(u, j, i) = ((um - (um * cx) * (um - AT(un, j, i - 1)))                      \
                                   - (vm * cy) * (um - AT(un, j - 1, i)))                          \
                                  - cpx * (AT(p, j, i + 1) - AT(p, j, i - 1))                      \
                                  + nu * (cxx * ((AT(un, j, i + 1) - two * um)                     \
                                                 + AT(un, j, i - 1))                               \
                                          + cyy * ((AT(un, j + 1, i) - two * um)                   \
                                                   + AT(un, j - 1, i)));                           \
                    AT(v, j, i) = ((vm - (um * cx) * (vm - AT(vn, j, i - 1)))                      \
                                   - (vm * cy) * (vm - AT(vn, j - 1, i)))                          \
                                  - cpy * (AT(p, j + 1, i) - AT(p, j - 1, i))                      \
                                  + nu * (cxx * ((AT(vn, j, i + 1) - two * vm)                     \
                                                 + AT(vn, j, i - 1))                               \
                                          + cyy * ((AT(vn, j + 1, i) - two * vm)                   \
                                                   + AT(vn, j - 1, i)));                           \
                }                                                                                  \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t j = 0; j < ny; ++j) {                                                     \
                const T edge = j == ny - 1 ? (T)1.0 : (T)0.0;                                      \
                if (j == 0 || j == ny - 1)                                                         \
                    for (int64_t i = 0; i < nx; ++i) {                                             \
                        AT(u, j, i) = edge;                                                        \
                        AT(v, j, i) = (T)0.0;                                                      \
                    }                                                                              \
                else {                                                                             \
                    AT(u, j, 0) = AT(u, j, nx - 1) = (T)0.0;                                       \
                    AT(v, j, 0) = AT(v, j, nx - 1) = (T)0.0;                                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

HB_CAVITY(cavity_flow_fp64, double)
