//! Pass pipeline (in progress).
