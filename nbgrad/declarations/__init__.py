"""The ground floor: pure declarations, importing only the standard library,
NumPy and Numba. Rows (an elementwise op's scalar forward and derivatives),
the op tables, the vectorizable scalar math the rows call, and the fused
optimizer updates; the backends above generate kernels from them."""
