/* channel_flow: per step, a Jacobi pressure update from the velocity divergence, then an explicit
 * momentum step; the new fields live in the workspace until the step is complete. */
#include <stdint.h>
#include <string.h>

void channel_flow_fp64(double *restrict u, double *restrict v, double *restrict p, int64_t ny,
                       int64_t nx, int64_t TSTEPS, double dt, double nu, double h, double F,
                       void *workspace, int64_t workspace_bytes) {
    (void)workspace_bytes;
    const int64_t cells = ny * nx;
    double *restrict pn = (double *)workspace;
    double *restrict un = pn + cells;
    double *restrict vn = un + cells;
#define AT(f, j, i) f[(j) * nx + (i)]
    for (int64_t t = 0; t < TSTEPS; ++t) {
#pragma omp parallel for schedule(static)
        for (int64_t j = 1; j < ny - 1; ++j)
            for (int64_t i = 0; i < nx; ++i) {
                const int64_t e = (i + 1) % nx, w = (i + nx - 1) % nx;
                const double div =
                    ((AT(u, j, e) - AT(u, j, w)) + (AT(v, j + 1, i) - AT(v, j - 1, i))) / (2.0 * h);
                AT(pn, j, i) = 0.25 * (((AT(p, j, e) + AT(p, j, w)) + AT(p, j + 1, i)) + AT(p, j - 1, i))
                               - (0.25 * h * h) * div;
            }
        memcpy(&AT(pn, 0, 0), &AT(pn, 1, 0), (size_t)nx * sizeof(double));
        memcpy(&AT(pn, ny - 1, 0), &AT(pn, ny - 2, 0), (size_t)nx * sizeof(double));
#pragma omp parallel for schedule(static)
        for (int64_t j = 1; j < ny - 1; ++j)
            for (int64_t i = 0; i < nx; ++i) {
                const int64_t e = (i + 1) % nx, w = (i + nx - 1) % nx;
                const double lap_u = ((((AT(u, j, e) + AT(u, j, w)) + AT(u, j + 1, i)) + AT(u, j - 1, i))
                                      - 4.0 * AT(u, j, i)) / (h * h);
                const double lap_v = ((((AT(v, j, e) + AT(v, j, w)) + AT(v, j + 1, i)) + AT(v, j - 1, i))
                                      - 4.0 * AT(v, j, i)) / (h * h);
                AT(un, j, i) = AT(u, j, i)
                               + dt * ((nu * lap_u - (AT(pn, j, e) - AT(pn, j, w)) / (2.0 * h)) + F);
                AT(vn, j, i) = AT(v, j, i)
                               + dt * (nu * lap_v - (AT(pn, j + 1, i) - AT(pn, j - 1, i)) / (2.0 * h));
            }
        for (int64_t i = 0; i < nx; ++i) {
            AT(un, 0, i) = AT(un, ny - 1, i) = 0.0;
            AT(vn, 0, i) = AT(vn, ny - 1, i) = 0.0;
        }
        memcpy(u, un, (size_t)cells * sizeof(double));
        memcpy(v, vn, (size_t)cells * sizeof(double));
        memcpy(p, pn, (size_t)cells * sizeof(double));
    }
#undef AT
}
