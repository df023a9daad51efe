//! Shared set-up for the benchmarks: the Phase A cells of `docs/benchmarks.md`.

/// `(name, batch, in, out)` of each Phase A cell.
pub const PHASE_A_CELLS: [(&str, i64, i64, i64); 6] = [
    ("t1", 1, 32, 32),
    ("t2", 1, 128, 64),
    ("t3", 8, 64, 64),
    ("t4", 16, 128, 64),
    ("c1", 64, 128, 64),
    ("c2", 256, 256, 128),
];
