! mat_scaled_add with A permuted (order i1, i0): A arrives as C's A[N][M], Fortran's A(M, N);
! B keeps C's B[M][N], Fortran's B(N, M). B <- B + alpha * A.
subroutine mat_scaled_add_fp64(A, B, M, N, alpha, workspace, workspace_bytes) &
    bind(C, name="mat_scaled_add_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: M, N
  real(c_double), value :: alpha
  real(c_double), intent(in) :: A(M, N)
  real(c_double), intent(inout) :: B(N, M)
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: i, j
  !$omp parallel do schedule(static)
  do i = 1, M
    do j = 1, N
      B(j, i) = B(j, i) + alpha * A(i, j)
    end do
  end do
end subroutine mat_scaled_add_fp64
