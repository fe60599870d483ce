! jacobi_2d: TSTEPS pairs of 5-point sweeps A -> B -> A over the interior.
subroutine jacobi_2d_fp64(A, B, N, TSTEPS, workspace, workspace_bytes) bind(C, name="jacobi_2d_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: N, TSTEPS
  real(c_double), intent(inout) :: A(N, N), B(N, N)
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: t, i, j
  real(c_double), parameter :: fifth = 0.2_c_double
  do t = 1, TSTEPS
    !$omp parallel do schedule(static)
    do i = 2, N - 1
      do j = 2, N - 1
        B(j, i) = fifth * (A(j, i) + A(j - 1, i) + A(j + 1, i) + A(j, i + 1) + A(j, i - 1))
      end do
    end do
    !$omp parallel do schedule(static)
    do i = 2, N - 1
      do j = 2, N - 1
        A(j, i) = fifth * (B(j, i) + B(j - 1, i) + B(j + 1, i) + B(j, i + 1) + B(j, i - 1))
      end do
    end do
  end do
end subroutine jacobi_2d_fp64
