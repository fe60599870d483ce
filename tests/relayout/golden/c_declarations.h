/* no request */
const double *restrict x;
double *restrict y;
void axpy_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha, void *workspace, int64_t workspace_bytes);

/* casts to every precision */
double *restrict a0;
float *restrict a1;
_Float16 *restrict a2;
relayout_bf16 *restrict a3;
relayout_fp8_e4m3 *restrict a4;
relayout_fp8_e5m2 *restrict a5;
void casts_fp64(double *restrict a0, float *restrict a1, _Float16 *restrict a2, relayout_bf16 *restrict a3, relayout_fp8_e4m3 *restrict a4, relayout_fp8_e5m2 *restrict a5, int64_t N, void *workspace, int64_t workspace_bytes);

/* spec's layout example */
double *restrict A;
const double *restrict B;
void jacobi_2d_fp64(double *restrict A, const double *restrict B, int64_t N, int64_t steps, void *workspace, int64_t workspace_bytes);

/* mixed zip */
typedef struct { float u; double v; } relayout_zip_uv;
const relayout_zip_uv *restrict uv;
int32_t *restrict n;
typedef struct { float u; double v; } relayout_zip_uv;
void kernel(const relayout_zip_uv *restrict uv, int32_t *restrict n, int64_t N, void *workspace, int64_t workspace_bytes);

/* struct of half and storage types */
typedef struct { int8_t d; uint16_t a; uint16_t b; uint8_t c; } relayout_zip_abcd;
relayout_zip_abcd *restrict abcd;
typedef struct { int8_t d; uint16_t a; uint16_t b; uint8_t c; } relayout_zip_abcd;
void kernel(relayout_zip_abcd *restrict abcd, int64_t N, void *workspace, int64_t workspace_bytes);

/* stacked zip and unzips */
const float *restrict xy;
float *restrict z_re;
double *restrict z_im;
double *restrict q0;
double *restrict q1;
double *restrict q2;
double *restrict q3;
void kernel(const float *restrict xy, float *restrict z_re, double *restrict z_im, double *restrict q0, double *restrict q1, double *restrict q2, double *restrict q3, int64_t N, double scale, void *workspace, int64_t workspace_bytes);
