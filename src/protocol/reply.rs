//! The text of the engine's replies that carry data: `info` lines,
//! `bestmove`, `status`, `query` responses and the `go` limits read from
//! the command.

use super::command::{GoParams, QueryKind};
use crate::rules::{Color, GameResult, Move};
use crate::search::{Bound, Clock, SearchLimits, SearchReport};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// The `info depth ... pv ...` line of one search report.
pub(crate) fn info_line(report: &SearchReport) -> String {
    let mut line = format!(
        "info depth {} seldepth {} multipv {} score {}",
        report.depth, report.seldepth, report.multipv, report.score
    );
    match report.bound {
        Bound::Exact => {}
        Bound::Lower => line.push_str(" lowerbound"),
        Bound::Upper => line.push_str(" upperbound"),
    }
    let micros = report.elapsed.as_micros().max(1);
    let nps = u128::from(report.nodes) * 1_000_000 / micros;
    write!(
        line,
        " nodes {} nps {nps} hashfull {} time {} pv",
        report.nodes,
        report.hashfull,
        report.elapsed.as_millis()
    )
    .ok();
    for mv in &report.pv {
        write!(line, " {mv}").ok();
    }
    line
}

/// The `bestmove <m> [ponder <m>]` line, `bestmove (none)` without a move;
/// the expected reply is named only when the `Ponder` option is on.
pub(crate) fn bestmove_line(best: Option<Move>, ponder: Option<Move>, with_ponder: bool) -> String {
    match (best, ponder) {
        (None, _) => "bestmove (none)".to_string(),
        (Some(best), Some(ponder)) if with_ponder => format!("bestmove {best} ponder {ponder}"),
        (Some(best), _) => format!("bestmove {best}"),
    }
}

/// The `response ...` line of a UGI `query`; player 1 is White.
pub(crate) fn query_response(kind: QueryKind, result: GameResult, side_to_move: Color) -> String {
    let answer = match kind {
        QueryKind::GameOver => bool_word(result != GameResult::Ongoing),
        QueryKind::P1Turn => bool_word(side_to_move == Color::White),
        QueryKind::Result => match result {
            GameResult::Ongoing => "none",
            GameResult::Draw => "draw",
            GameResult::Win {
                winner: Color::White,
                ..
            } => "p1win",
            GameResult::Win {
                winner: Color::Black,
                ..
            } => "p2win",
        },
    };
    format!("response {answer}")
}

fn bool_word(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}

/// The search limits of a `go` command, with the clock of the side to move
/// (`wtime`/`winc` for White, `btime`/`binc` for Black). A `go` that plays
/// on a clock (any clock argument or `movestogo`) but leaves out the side
/// to move's time gives it none: that caller expects an answer, and a
/// search without limit would never come.
pub(crate) fn search_limits(
    params: &GoParams,
    side_to_move: Color,
    searchmoves: Vec<Move>,
    started: Instant,
) -> SearchLimits {
    let (time, increment) = match side_to_move {
        Color::White => (params.wtime, params.winc),
        Color::Black => (params.btime, params.binc),
    };
    SearchLimits {
        depth: params.depth,
        nodes: params.nodes,
        movetime: params.movetime.map(Duration::from_millis),
        clock: on_a_clock(params).then(|| Clock {
            time: Duration::from_millis(time.unwrap_or(0)),
            increment: Duration::from_millis(increment.unwrap_or(0)),
            moves_to_go: params.movestogo,
            lag: None,
        }),
        mate: params.mate,
        infinite: params.infinite,
        searchmoves,
        started: Some(started),
    }
}

/// Whether a `go` plays on a clock.
fn on_a_clock(params: &GoParams) -> bool {
    [params.wtime, params.btime, params.winc, params.binc]
        .iter()
        .any(Option::is_some)
        || params.movestogo.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Termination;
    use crate::rules::notation::parse_move_cells;
    use crate::search::Score;

    fn mv(text: &str) -> Move {
        let (from, to) = parse_move_cells(text).unwrap();
        Move::new(from, to)
    }

    #[test]
    fn info_lines() {
        let mut report = SearchReport {
            depth: 5,
            seldepth: 9,
            multipv: 1,
            score: Score::Centi(-35),
            bound: Bound::Exact,
            nodes: 20_000,
            elapsed: Duration::from_millis(250),
            hashfull: 12,
            pv: vec![mv("f1f2"), mv("f11f10")],
        };
        assert_eq!(
            info_line(&report),
            "info depth 5 seldepth 9 multipv 1 score cp -35 nodes 20000 nps 80000 \
             hashfull 12 time 250 pv f1f2 f11f10"
        );
        report.score = Score::Mate(-3);
        report.bound = Bound::Upper;
        report.elapsed = Duration::ZERO;
        report.pv.clear();
        assert_eq!(
            info_line(&report),
            "info depth 5 seldepth 9 multipv 1 score mate -3 upperbound nodes 20000 \
             nps 20000000000 hashfull 12 time 0 pv"
        );
        report.bound = Bound::Lower;
        assert!(info_line(&report).contains("mate -3 lowerbound nodes"));
    }

    #[test]
    fn bestmove_lines() {
        let (best, ponder) = (Some(mv("b1c2")), Some(mv("f1f2")));
        assert_eq!(bestmove_line(None, ponder, true), "bestmove (none)");
        assert_eq!(
            bestmove_line(best, ponder, true),
            "bestmove b1c2 ponder f1f2"
        );
        assert_eq!(bestmove_line(best, ponder, false), "bestmove b1c2");
        assert_eq!(bestmove_line(best, None, true), "bestmove b1c2");
    }

    #[test]
    fn query_responses() {
        let black_wins = GameResult::Win {
            winner: Color::Black,
            reason: Termination::Forfeit,
        };
        let ask = |kind, result, side| query_response(kind, result, side);
        assert_eq!(
            ask(QueryKind::GameOver, GameResult::Ongoing, Color::White),
            "response false"
        );
        assert_eq!(
            ask(QueryKind::GameOver, GameResult::Draw, Color::White),
            "response true"
        );
        assert_eq!(
            ask(QueryKind::P1Turn, GameResult::Ongoing, Color::Black),
            "response false"
        );
        assert_eq!(
            ask(QueryKind::P1Turn, GameResult::Ongoing, Color::White),
            "response true"
        );
        assert_eq!(
            ask(QueryKind::Result, black_wins, Color::White),
            "response p2win"
        );
        assert_eq!(
            ask(QueryKind::Result, GameResult::Draw, Color::White),
            "response draw"
        );
        assert_eq!(
            ask(QueryKind::Result, GameResult::Ongoing, Color::White),
            "response none"
        );
    }

    #[test]
    fn limits_use_the_clock_of_the_side_to_move() {
        let params = GoParams {
            wtime: Some(60_000),
            btime: Some(30_000),
            winc: Some(1_000),
            movestogo: Some(20),
            depth: Some(7),
            ..GoParams::default()
        };
        let white = search_limits(&params, Color::White, Vec::new(), Instant::now());
        let clock = white.clock.unwrap();
        assert_eq!(clock.time, Duration::from_secs(60));
        assert_eq!(clock.increment, Duration::from_secs(1));
        assert_eq!(clock.moves_to_go, Some(20));
        assert_eq!(white.depth, Some(7));
        let black = search_limits(&params, Color::Black, vec![mv("f11f10")], Instant::now());
        let clock = black.clock.unwrap();
        assert_eq!(clock.time, Duration::from_secs(30));
        assert_eq!(clock.increment, Duration::ZERO);
        assert_eq!(black.searchmoves, vec![mv("f11f10")]);
        let only_white = GoParams {
            wtime: Some(5),
            movetime: Some(300),
            infinite: true,
            ..GoParams::default()
        };
        let limits = search_limits(&only_white, Color::Black, Vec::new(), Instant::now());
        assert_eq!(limits.movetime, Some(Duration::from_millis(300)));
        assert!(limits.infinite);
        // Black plays on a clock it was not given: it has no time.
        assert_eq!(limits.clock.map(|clock| clock.time), Some(Duration::ZERO));
        let increment_alone = GoParams {
            winc: Some(100),
            ..GoParams::default()
        };
        let clock = search_limits(&increment_alone, Color::White, Vec::new(), Instant::now())
            .clock
            .unwrap();
        assert_eq!(
            (clock.time, clock.increment),
            (Duration::ZERO, Duration::from_millis(100))
        );
        let depth_alone = GoParams {
            depth: Some(3),
            ..GoParams::default()
        };
        let limits = search_limits(&depth_alone, Color::White, Vec::new(), Instant::now());
        assert!(limits.clock.is_none());
    }
}
