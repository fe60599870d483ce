"""The digit algebra: each operation is a pure function from the arrays' state to the next (state,
digits, regroup, grid), and the end state lowers to the single-node NodeLayout the conversion
kernels consume (lower)."""
