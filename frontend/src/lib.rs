//! Python source to rextio-torch IR: parsing, import resolution, claim rules, diagnostics.

pub mod claim;
