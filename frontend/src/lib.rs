//! Python source to IR (in progress).
