//! Static evaluation: a score for the side to move from the board alone,
//! built from terms that come from the game (material, the race of queen
//! and guards to the throne, the formation, blockers, capture chances and
//! mobility), every weight in [`WEIGHTS`].

use crate::rules::geometry::{
    Bitboard, Direction, RINGS, STEP_SOURCES, STEP_TARGETS, THRONE, THRONE_RING, cells_of,
    sandwiched_by, shift,
};
use crate::rules::{Color, Position};

/// Every weight of the evaluation, in hundredths of a guard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Weights {
    /// An active guard.
    pub guard: i32,
    /// An active queen.
    pub queen: i32,
    /// Each captured piece still waiting for relocation, on top of the
    /// material it no longer counts for (it costs a turn).
    pub captured_waiting: i32,
    /// The active queen by ring, throne first.
    pub queen_ring: [i32; 6],
    /// Each active guard by ring (ring 0 never holds a guard).
    pub guard_ring: [i32; 6],
    /// By the number of own active guards next to the throne.
    pub formation: [i32; 7],
    /// By the same count, while the own queen sits active on the throne.
    pub formation_with_queen: [i32; 7],
    /// Five guards around an empty-of-queen throne: the sixth may never
    /// enter, and the queen must come first.
    pub forfeit_danger: i32,
    /// Each active enemy piece parked next to the throne, blocking the own
    /// formation.
    pub enemy_parked: i32,
    /// Each empty cell the side to move could step to and capture.
    pub capture_chance_to_move: i32,
    /// The same for the side that just moved (it must wait a turn).
    pub capture_chance_waiting: i32,
    /// The side not to move could complete the formation next turn.
    pub win_threat_waiting: i32,
    /// Each step the pieces could make.
    pub mobility: i32,
    /// Having the move.
    pub tempo: i32,
}

/// The weights in use: hand-set values rescaled term by term by `agon
/// tune` (fitted to the search scores of 667 self-play games) and confirmed
/// by a match. The fit set both formation terms and the forfeit danger to
/// zero, and matches that switched the formation terms off gained; they
/// stay in the table for later fits.
pub(crate) const WEIGHTS: Weights = Weights {
    guard: 100,
    queen: 300,
    captured_waiting: -40,
    queen_ring: [354, 177, 116, 61, 27, 0],
    guard_ring: [0, 185, 124, 74, 31, 0],
    formation: [0; 7],
    formation_with_queen: [0; 7],
    forfeit_danger: 0,
    enemy_parked: -19,
    capture_chance_to_move: 374,
    capture_chance_waiting: 94,
    win_threat_waiting: 200,
    mobility: 23,
    tempo: 15,
};

/// Declares [`Term`] and every list derived from it from one row per
/// term: the variant and its title, from which the `eval` row and the
/// `Eval <title>` developer option are named.
macro_rules! terms {
    ($($(#[doc = $doc:literal])* $term:ident: $title:literal,)*) => {
        /// An evaluation term: one row of `eval`, one weight in percent.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Term {
            $($(#[doc = $doc])* $term,)*
        }

        impl Term {
            /// Every term, in the order of the term arrays.
            pub const ALL: [Term; Term::COUNT] = [$(Term::$term),*];
            /// The number of terms.
            pub(crate) const COUNT: usize = [$($title),*].len();

            /// The title, as in `Eval <title>` (`eval` shows it in lower case).
            pub(crate) const fn title(self) -> &'static str {
                match self {
                    $(Term::$term => $title,)*
                }
            }

            /// The term's place in the arrays of terms.
            pub(crate) const fn index(self) -> usize {
                self as usize
            }

            /// The developer option weighting the term.
            pub const fn option_name(self) -> &'static str {
                match self {
                    $(Term::$term => concat!("Eval ", $title),)*
                }
            }
        }
    };
}

terms! {
    /// Active guards and queen.
    Material: "Material",
    /// Captured pieces waiting for relocation.
    CapturedWaiting: "Captured Waiting",
    /// The queen's ring.
    QueenRace: "Queen Race",
    /// The guards' rings.
    GuardRace: "Guard Race",
    /// Guards next to the throne.
    Formation: "Formation",
    /// Guards next to the throne with the queen on it.
    FormationWithQueen: "Formation With Queen",
    /// Five guards around a throne without the own queen.
    ForfeitDanger: "Forfeit Danger",
    /// Enemy pieces next to the throne.
    EnemyParked: "Enemy Parked",
    /// Cells a step could capture on.
    CaptureChances: "Capture Chances",
    /// The waiting side threatens to complete the formation.
    WinThreat: "Win Threat",
    /// Steps the pieces could make.
    Mobility: "Mobility",
    /// Having the move.
    Tempo: "Tempo",
}

/// A weight in percent for each term, indexed by `Term as usize`.
pub(crate) type TermPercents = [i32; Term::COUNT];

/// Every term at its full weight: the evaluation as tuned.
pub const FULL_PERCENTS: TermPercents = [100; Term::COUNT];

/// Where the pieces of `color` could step (for the mobility and capture
/// terms): empty cells not between two active enemies.
fn step_destinations(position: &Position, color: Color) -> Bitboard {
    let allowed = position.empty_cells() & !sandwiched_by(position.active(!color));
    let active = position.active(color);
    let guards = active & !position.queens();
    let mut reach = 0;
    Direction::each(|index, direction| {
        reach |= shift(guards & STEP_SOURCES[index], direction);
    });
    reach &= !THRONE;
    for queen in cells_of(active & position.queens()) {
        reach |= STEP_TARGETS[queen.index()];
    }
    reach & allowed
}

/// The cells where a piece of `color` landing would capture: the neighbour
/// is an active enemy and the cell beyond it an active piece of `color`.
#[inline(always)]
pub(crate) fn capture_cells(position: &Position, color: Color) -> Bitboard {
    let ours = position.active(color);
    let theirs = position.active(!color);
    let mut cells = 0;
    Direction::each(|_, direction| {
        cells |= shift(theirs & shift(ours, direction), direction);
    });
    cells
}

/// The cell where a guard of `color` entering from outside the guard ring
/// would complete the winning formation: its queen sits active on the
/// throne and five of its active guards stand around it (empty otherwise).
pub(crate) fn winning_cells(position: &Position, color: Color) -> Bitboard {
    if guards_around_held_throne(position, color) == Some(5) {
        THRONE_RING & !(position.active(color) & !position.queens())
    } else {
        0
    }
}

/// How many active guards of `color` stand around the throne while its
/// queen sits active on it; `None` when she does not.
pub(crate) fn guards_around_held_throne(position: &Position, color: Color) -> Option<u32> {
    let active = position.active(color);
    (active & position.queens() & THRONE != 0)
        .then(|| (active & !position.queens() & THRONE_RING).count_ones())
}

/// Whether `color`, if it were to move, could complete the winning formation
/// with one step: an active guard from outside the ring can step into its
/// [`winning_cells`], and no capture waits for relocation.
pub(crate) fn has_win_threat(position: &Position, color: Color) -> bool {
    let gap = winning_cells(position, color);
    if gap == 0
        || position.captured(color) != 0
        || gap & position.empty_cells() & !sandwiched_by(position.active(!color)) == 0
    {
        return false;
    }
    // A guard already next to the throne would only open another gap.
    let outside = position.active(color) & !position.queens() & !THRONE_RING;
    cells_of(gap).any(|cell| STEP_TARGETS_INTO[cell.index()] & outside != 0)
}

/// For each cell, the cells a guard could step from to reach it (same ring
/// or one further out).
const STEP_TARGETS_INTO: [Bitboard; 121] = {
    let mut table = [0u128; 121];
    let mut from = 0;
    while from < 121 {
        let mut targets = STEP_TARGETS[from];
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            table[to] |= 1u128 << from;
        }
        from += 1;
    }
    table
};

/// Whether [`WEIGHTS`] gives each term any weight: a term without one is
/// never computed.
const WEIGHTED: [bool; Term::COUNT] = {
    const fn any(values: &[i32]) -> bool {
        let mut index = 0;
        while index < values.len() {
            if values[index] != 0 {
                return true;
            }
            index += 1;
        }
        false
    }
    let w = &WEIGHTS;
    let mut weighted = [false; Term::COUNT];
    let mut index = 0;
    while index < Term::COUNT {
        weighted[index] = match Term::ALL[index] {
            Term::Material => w.guard != 0 || w.queen != 0,
            Term::CapturedWaiting => w.captured_waiting != 0,
            Term::QueenRace => any(&w.queen_ring),
            Term::GuardRace => any(&w.guard_ring),
            Term::Formation => any(&w.formation),
            Term::FormationWithQueen => any(&w.formation_with_queen),
            Term::ForfeitDanger => w.forfeit_danger != 0,
            Term::EnemyParked => w.enemy_parked != 0,
            Term::CaptureChances => w.capture_chance_to_move != 0 || w.capture_chance_waiting != 0,
            Term::WinThreat => w.win_threat_waiting != 0,
            Term::Mobility => w.mobility != 0,
            Term::Tempo => w.tempo != 0,
        };
        index += 1;
    }
    weighted
};

/// The terms for one side, from that side's view (larger is better for
/// it). A term weighted zero, in [`WEIGHTS`] or in `percent`, is not
/// computed and stays 0.
fn side_terms(
    position: &Position,
    color: Color,
    to_move: bool,
    percent: &TermPercents,
) -> [i32; Term::COUNT] {
    let w = &WEIGHTS;
    let on = |term: Term| WEIGHTED[term.index()] && percent[term.index()] != 0;
    let active = position.active(color);
    let guards = active & !position.queens();
    let queen = active & position.queens();
    let mut terms = [0; Term::COUNT];

    if on(Term::Material) {
        terms[Term::Material.index()] =
            w.guard * guards.count_ones() as i32 + w.queen * queen.count_ones() as i32;
    }
    if on(Term::CapturedWaiting) {
        terms[Term::CapturedWaiting.index()] =
            w.captured_waiting * position.captured(color).count_ones() as i32;
    }
    let (queen_race, guard_race) = (on(Term::QueenRace), on(Term::GuardRace));
    if queen_race || guard_race {
        for (ring, cells) in RINGS.iter().enumerate() {
            if queen_race && queen & cells != 0 {
                terms[Term::QueenRace.index()] = w.queen_ring[ring];
            }
            if guard_race {
                terms[Term::GuardRace.index()] +=
                    w.guard_ring[ring] * (guards & cells).count_ones() as i32;
            }
        }
    }
    let around = (guards & THRONE_RING).count_ones() as usize;
    if on(Term::Formation) {
        terms[Term::Formation.index()] = w.formation[around];
    }
    if queen & THRONE != 0 {
        if on(Term::FormationWithQueen) {
            terms[Term::FormationWithQueen.index()] = w.formation_with_queen[around];
        }
    } else if around == 5 && on(Term::ForfeitDanger) {
        terms[Term::ForfeitDanger.index()] = w.forfeit_danger;
    }
    if on(Term::EnemyParked) {
        terms[Term::EnemyParked.index()] =
            w.enemy_parked * (position.active(!color) & THRONE_RING).count_ones() as i32;
    }
    let (capture_chances, mobility) = (on(Term::CaptureChances), on(Term::Mobility));
    if capture_chances || mobility {
        let reach = step_destinations(position, color);
        if capture_chances {
            let chances = (reach & capture_cells(position, color)).count_ones() as i32;
            terms[Term::CaptureChances.index()] = chances
                * if to_move {
                    w.capture_chance_to_move
                } else {
                    w.capture_chance_waiting
                };
        }
        if mobility {
            terms[Term::Mobility.index()] = w.mobility * reach.count_ones() as i32;
        }
    }
    if !to_move && on(Term::WinThreat) && has_win_threat(position, color) {
        terms[Term::WinThreat.index()] = w.win_threat_waiting;
    }
    if to_move && on(Term::Tempo) {
        terms[Term::Tempo.index()] = w.tempo;
    }
    terms
}

/// Each term for the side to move minus the same term for the other side,
/// unweighted by percent (for fitting the weights).
pub(crate) fn term_differences(position: &Position) -> [i32; Term::COUNT] {
    let us = position.side_to_move();
    let ours = side_terms(position, us, true, &FULL_PERCENTS);
    let theirs = side_terms(position, !us, false, &FULL_PERCENTS);
    std::array::from_fn(|term| ours[term] - theirs[term])
}

/// The evaluation of `position` from the side to move's view, in
/// hundredths of a guard, with each term weighted by `percent`
/// ([`FULL_PERCENTS`] is the evaluation as tuned).
pub fn evaluate(position: &Position, percent: &TermPercents) -> i32 {
    let us = position.side_to_move();
    let ours = side_terms(position, us, true, percent);
    let theirs = side_terms(position, !us, false, percent);
    let weighted: i32 = (0..Term::COUNT)
        .map(|term| (ours[term] - theirs[term]) * percent[term])
        .sum();
    weighted / 100
}

/// Whether the static evaluation can be trusted here: the game goes on,
/// nothing waits to be relocated, no formation is one step away, and the
/// side to move cannot capture.
pub(crate) fn is_quiet(position: &Position) -> bool {
    let us = position.side_to_move();
    position.formation_outcome().is_none()
        && position.captured(Color::White) == 0
        && position.captured(Color::Black) == 0
        && !has_win_threat(position, us)
        && !has_win_threat(position, !us)
        && step_destinations(position, us) & capture_cells(position, us) == 0
}

/// The evaluation broken into its terms (weighted by `percent`), one
/// human-readable line each (white, black, white minus black), ending with
/// the total from the side to move's view, for the protocol's `eval`
/// command.
pub(crate) fn describe(position: &Position, percent: &TermPercents) -> Vec<String> {
    let stm = position.side_to_move();
    let white = side_terms(position, Color::White, stm == Color::White, percent);
    let black = side_terms(position, Color::Black, stm == Color::Black, percent);
    let mut lines = vec![format!(
        "{:<22} {:>7} {:>7} {:>7}",
        "term", "white", "black", "total"
    )];
    for term in Term::ALL {
        let index = term.index();
        let white = white[index] * percent[index] / 100;
        let black = black[index] * percent[index] / 100;
        lines.push(format!(
            "{:<22} {:>7} {:>7} {:>7}",
            term.title().to_lowercase(),
            white,
            black,
            white - black
        ));
    }
    lines.push(format!(
        "total {} (side to move, {})",
        evaluate(position, percent),
        stm.name()
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{START_FEN, parse_fen};

    const FULL: TermPercents = FULL_PERCENTS;

    #[test]
    fn the_start_position_is_balanced_but_for_the_tempo() {
        let position = parse_fen(START_FEN).unwrap();
        assert_eq!(evaluate(&position, &FULL), WEIGHTS.tempo);
    }

    #[test]
    fn a_term_weighted_zero_drops_out() {
        let position = parse_fen(START_FEN).unwrap();
        let mut percent = FULL;
        percent[Term::Tempo.index()] = 0;
        assert_eq!(evaluate(&position, &percent), 0);
        percent = [200; Term::COUNT];
        assert_eq!(evaluate(&position, &percent), 2 * WEIGHTS.tempo);
    }

    #[test]
    fn the_side_ahead_is_ahead_whoever_is_to_move() {
        let white = parse_fen("6/7/8/9/4G5/5Q5/10/9/8/g6/q5 w").unwrap();
        let black = parse_fen("6/7/8/9/4G5/5Q5/10/9/8/g6/q5 b").unwrap();
        assert!(evaluate(&white, &FULL) > 0);
        assert!(evaluate(&black, &FULL) < 0);
    }

    /// The position turned half a turn about the throne, cell (file, rank)
    /// to (10 - file, 10 - rank), with the colours swapped: the board's
    /// central symmetry, the same game seen from the other side. In FEN
    /// the ranks and the cells of each rank come in reverse order.
    fn mirrored(fen: &str) -> String {
        let mut fields = fen.split(' ');
        let board = fields.next().unwrap();
        let side = if fields.next() == Some("w") { "b" } else { "w" };
        let ranks: Vec<String> = board
            .split('/')
            .rev()
            .map(|rank| {
                // Tokens: a run of empty cells, or a piece with its capture mark.
                let mut tokens: Vec<String> = Vec::new();
                for c in rank.chars() {
                    match tokens.last_mut() {
                        Some(last)
                            if c == '*'
                                || (c.is_ascii_digit()
                                    && last.bytes().all(|b| b.is_ascii_digit())) =>
                        {
                            last.push(c);
                        }
                        _ => tokens.push(c.to_string()),
                    }
                }
                tokens
                    .iter()
                    .rev()
                    .flat_map(|token| token.chars())
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect()
            })
            .collect();
        format!("{} {side}", ranks.join("/"))
    }

    #[test]
    fn the_mirrored_board_scores_the_same_for_its_side_to_move() {
        for fen in [
            "6/7/8/9/4G5/5Q5/10/9/8/g6/q5 w",
            "6/7/8/9/4GG4/4GQG4/5G4/4G4/8/g6/q5 b",
            "6/7/2G5/1q3G3/5G4/3gGQg*G1g1/6g3/5g3/2g5/2G4/6 b",
            "6/7/8/5G3/3GGGQ3/3gG*qg4/3G*gg4/3g1g3/8/7/6 w",
            "q1G2g/G5G/8/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        ] {
            let position = parse_fen(fen).unwrap();
            let mirror = parse_fen(&mirrored(fen)).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert_ne!(position.key(), mirror.key(), "{fen} is its own mirror");
            assert_eq!(mirrored(&mirrored(fen)), fen);
            assert_eq!(
                term_differences(&position),
                term_differences(&mirror),
                "{fen}"
            );
            assert_eq!(
                evaluate(&position, &FULL),
                evaluate(&mirror, &FULL),
                "{fen}"
            );
            assert_ne!(evaluate(&position, &FULL), 0, "{fen}");
        }
    }

    #[test]
    fn terms_are_listed_in_the_order_of_their_indices() {
        for (index, term) in Term::ALL.into_iter().enumerate() {
            assert_eq!(term.index(), index, "{term:?}");
        }
        assert_eq!(Term::CapturedWaiting.option_name(), "Eval Captured Waiting");
    }

    #[test]
    fn terms_weighted_zero_remove_exactly_their_share() {
        // Mobility and capture chances switched off: the describe rows of
        // both are zero, and the total equals the full evaluation minus
        // their weighted differences.
        let position = parse_fen("6/7/8/9/4G5/3Gg1Q4/10/9/8/g6/q5 w").unwrap();
        let mut percent = FULL;
        for term in [Term::Mobility, Term::CaptureChances] {
            percent[term.index()] = 0;
        }
        let differences = term_differences(&position);
        let without: i32 = [Term::Mobility, Term::CaptureChances]
            .iter()
            .map(|term| differences[term.index()] * 100)
            .sum();
        let full: i32 = differences.iter().map(|d| d * 100).sum();
        assert_ne!(without, 0);
        assert_eq!(evaluate(&position, &percent), (full - without) / 100);
        assert!(!WEIGHTED[Term::Formation.index()]);
        assert_eq!(differences[Term::Formation.index()], 0);
    }

    #[test]
    fn describe_ends_with_the_total() {
        let position = parse_fen(START_FEN).unwrap();
        let lines = describe(&position, &FULL);
        assert_eq!(lines.len(), Term::COUNT + 2);
        assert!(
            lines
                .last()
                .unwrap()
                .starts_with(&format!("total {}", evaluate(&position, &FULL)))
        );
    }

    #[test]
    fn a_queen_on_the_throne_with_five_guards_threatens_to_win() {
        // White: queen f6, guards on five ring-1 cells, a sixth guard next
        // to the gap on ring 2.
        let position = parse_fen("6/7/8/9/4GG4/4GQG4/5G4/4G4/8/g6/q5 b").unwrap();
        assert!(has_win_threat(&position, Color::White));
        assert!(!has_win_threat(&position, Color::Black));
    }

    #[test]
    fn only_a_capture_answers_a_threat_to_complete_the_formation() {
        use crate::rules::{legal_moves, to_fen};
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        // Random games from the throne races of real matches reach many
        // positions in which one side threatens to complete the formation.
        let starts = crate::search::throne_race_positions();
        let mut rng = StdRng::seed_from_u64(7);
        let (mut threatened, mut answered, mut left) = (0, 0, 0);
        for start in &starts {
            for _ in 0..40 {
                let mut position = *start;
                for _ in 0..12 {
                    if position.formation_outcome().is_some() {
                        break;
                    }
                    let moves = legal_moves(&position);
                    let moves = moves.as_slice();
                    if moves.is_empty() {
                        break;
                    }
                    let us = position.side_to_move();
                    if has_win_threat(&position, !us) {
                        threatened += 1;
                        let captures = capture_cells(&position, us);
                        for &mv in moves.iter() {
                            let child = position.make_move(mv);
                            if captures & mv.to().bit() != 0 {
                                answered += usize::from(!has_win_threat(&child, !us));
                            } else {
                                left += 1;
                                assert!(
                                    has_win_threat(&child, !us),
                                    "{mv} answers the threat in {} without a capture",
                                    to_fen(&position)
                                );
                            }
                        }
                    }
                    position = position.make_move(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        assert!(threatened >= 100, "{threatened} threatened positions");
        assert!(
            answered > 0 && left > answered,
            "{answered} captures answer, {left} other moves"
        );
    }

    #[test]
    fn capture_cells_need_an_own_piece_beyond_the_enemy() {
        let position = parse_fen("6/7/8/9/10/3Gg6/10/9/8/7/q5 w").unwrap();
        let cells: Vec<String> = cells_of(capture_cells(&position, Color::White))
            .map(|c| c.to_string())
            .collect();
        assert_eq!(cells, vec!["f6"]);
    }
}
