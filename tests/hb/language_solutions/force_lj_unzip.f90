! force_lj with pos unzipped along its last dimension: three coordinate arrays px, py, pz.
subroutine force_lj_fp64(px, py, pz, force, N, epsilon, sigma, workspace, workspace_bytes) &
    bind(C, name="force_lj_fp64")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int64_t), value :: N
  real(c_double), value :: epsilon, sigma
  real(c_double), intent(in) :: px(N), py(N), pz(N)
  real(c_double), intent(inout) :: force(3, N)
  type(c_ptr), value :: workspace
  integer(c_int64_t), value :: workspace_bytes
  integer(c_int64_t) :: i, j
  real(c_double) :: s2, scale, fx, fy, fz, dx, dy, dz, r2, q, s6, m
  s2 = sigma * sigma
  scale = 24.0_c_double * epsilon
  !$omp parallel do private(j, fx, fy, fz, dx, dy, dz, r2, q, s6, m) schedule(static)
  do i = 1, N
    fx = 0
    fy = 0
    fz = 0
    do j = 1, N
      if (j == i) cycle
      dx = px(i) - px(j)
      dy = py(i) - py(j)
      dz = pz(i) - pz(j)
      r2 = dx * dx + dy * dy + dz * dz
      q = s2 / r2
      s6 = q * q * q
      m = scale * (2.0_c_double * s6 * s6 - s6) / r2
      fx = fx + m * dx
      fy = fy + m * dy
      fz = fz + m * dz
    end do
    force(1, i) = fx
    force(2, i) = fy
    force(3, i) = fz
  end do
end subroutine force_lj_fp64
