//! Shared set-up for the benchmarks: the Phase A cells of `docs/benchmarks.md`, and the
//! long-row cells that time the blocked pairwise sums of the fused kernel.

/// `(name, batch, in, out)` of each Phase A cell.
pub const PHASE_A_CELLS: [(&str, i64, i64, i64); 6] = [
    ("t1", 1, 32, 32),
    ("t2", 1, 128, 64),
    ("t3", 8, 64, 64),
    ("t4", 16, 128, 64),
    ("c1", 64, 128, 64),
    ("c2", 256, 256, 128),
];

/// `(name, batch, in, out)` of cells with long rows: inner sizes past the kernel's dot-product
/// block (one-pass kernel, both tile shapes) and long output rows reduced by the epilogue
/// (one-pass kernel and GEMM path, 1 << 18 multiply-adds being the crossover).
pub const LONG_ROW_CELLS: [(&str, i64, i64, i64); 4] = [
    ("k4096", 1, 4096, 32),
    ("k1024", 4, 1024, 32),
    ("n8192", 2, 8, 8192),
    ("n16384", 1, 16, 16384),
];
