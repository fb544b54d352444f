//! The engine's line protocol (UCI style, with UGI compatibility).

pub mod command;
