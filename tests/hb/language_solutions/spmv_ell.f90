! spmv in ELL: y <- A x over A_width slots per row (Fortran's A_data(A_width, M)); a padding
! slot has column -1, and columns count from 0 as in C.
subroutine spmv_fp64(A_data, A_indices, x, y, M, N, nnz, A_width, workspace, workspace_bytes) &
    bind(C, name="spmv_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: M, N, nnz, A_width
  real(c_double), intent(in) :: A_data(A_width, M), x(N)
  integer(c_int64_t), intent(in) :: A_indices(A_width, M)
  real(c_double), intent(inout) :: y(M)
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: i, s, col
  real(c_double) :: total
  !$omp parallel do private(s, col, total) schedule(static)
  do i = 1, M
    total = 0
    do s = 1, A_width
      col = A_indices(s, i)
      if (col >= 0) total = total + A_data(s, i) * x(col + 1)
    end do
    y(i) = total
  end do
end subroutine spmv_fp64
