//! The learned evaluation (NNUE): piece kind and cell inputs seen from each
//! side, one hidden layer kept up to date incrementally as the search makes
//! moves, integer inference.

pub mod cells;
