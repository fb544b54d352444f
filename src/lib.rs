//! agon: an engine, referee and toolbox for the board game Agon.

pub mod protocol;
pub mod rules;
pub mod search;
pub mod tools;
