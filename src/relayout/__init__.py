"""relayout: a request language for how an array reaches a kernel, and the kernels that convert it."""
