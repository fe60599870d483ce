! gemm: C <- alpha * A B + beta * C. In Fortran's order the row-major product is C' = B' A'.
subroutine gemm_fp64(A, B, C, NI, NJ, NK, alpha, beta, workspace, workspace_bytes) &
    bind(C, name="gemm_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: NI, NJ, NK
  real(c_double), value :: alpha, beta
  real(c_double), intent(in) :: A(NK, NI), B(NJ, NK)
  real(c_double), intent(inout) :: C(NJ, NI)
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: i, k
  !$omp parallel do private(k) schedule(static)
  do i = 1, NI
    C(:, i) = beta * C(:, i)
    do k = 1, NK
      C(:, i) = C(:, i) + (alpha * A(k, i)) * B(:, k)
    end do
  end do
end subroutine gemm_fp64
