! scaled_add on MPI ranks: each rank updates its own tile; no communication is needed.
subroutine scaled_add_mpi_fp64(x, y, N, alpha, comm, workspace, workspace_bytes) &
    bind(C, name="scaled_add_mpi_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: N
  real(c_double), value :: alpha
  real(c_double), intent(in) :: x(N)
  real(c_double), intent(inout) :: y(N)
  integer(c_int), value :: comm
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: i
  !$omp parallel do simd schedule(static)
  do i = 1, N
    y(i) = y(i) + alpha * x(i)
  end do
end subroutine scaled_add_mpi_fp64
