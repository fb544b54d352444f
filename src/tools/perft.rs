//! The `perft` subcommand: counts per depth with timing, or a divide.

use crate::rules::Position;
use crate::rules::perft::{divide_lines, perft_divide};
use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The stop flag of a count on the command line, which runs to its end
/// (Ctrl-C ends the process).
fn never_stopped() -> AtomicBool {
    AtomicBool::new(false)
}

fn interrupted() -> io::Error {
    io::Error::other("the count was interrupted")
}

/// Writes the divide lines of [`divide_lines`].
pub fn write_divide(
    out: &mut impl Write,
    position: &Position,
    depth: u32,
    threads: usize,
) -> io::Result<()> {
    for line in divide_lines(position, depth, threads, &never_stopped()).ok_or_else(interrupted)? {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Counts every depth from 1 to `depth`, one line each with time and speed.
pub fn write_perft_table(
    out: &mut impl Write,
    position: &Position,
    depth: u32,
    threads: usize,
) -> io::Result<()> {
    for current in 1..=depth {
        let started = Instant::now();
        let nodes: u64 = perft_divide(position, current, threads, &never_stopped())
            .ok_or_else(interrupted)?
            .iter()
            .map(|(_, count)| count)
            .sum();
        let seconds = started.elapsed().as_secs_f64();
        let nps = if seconds > 0.0 {
            nodes as f64 / seconds
        } else {
            0.0
        };
        writeln!(
            out,
            "perft {current}: {nodes} nodes in {seconds:.3} s ({:.1} Mnps)",
            nps / 1e6
        )?;
        out.flush()?;
    }
    Ok(())
}
