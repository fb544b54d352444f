//! Static evaluation: a score for the side to move from the board alone.

use crate::rules::{Color, Position};

/// The evaluation of `position` from the side to move's view, in
/// hundredths of a guard.
pub fn evaluate(position: &Position) -> i32 {
    let us = position.side_to_move();
    let material = |c: Color| position.active(c).count_ones() as i32;
    100 * (material(us) - material(!us))
}

/// The evaluation broken into its terms, one human-readable line each,
/// ending with the total, for the protocol's `eval` command.
pub fn describe(position: &Position) -> Vec<String> {
    let material = |c: Color| 100 * position.active(c).count_ones() as i32;
    vec![
        format!(
            "material white {} black {}",
            material(Color::White),
            material(Color::Black)
        ),
        format!("total {} (side to move)", evaluate(position)),
    ]
}
