//! Engine-level tests: forced wins checked against a brute-force search,
//! limits, MultiPV, and legal moves over many self-play games.

use super::*;
use crate::rules::position::FormationOutcome;
use crate::rules::{
    Color, GameResult, Position, START_FEN, legal_moves, parse_fen, parse_move, start_position,
};
use crate::search::params;
use rand::{Rng, SeedableRng};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Whether the side to move of `position` can force a win within `moves`
/// of its own moves: plain minimax over every legal move, no pruning.
fn forced_win_within(position: &Position, moves: u32) -> bool {
    if moves == 0 {
        return false;
    }
    let us = position.side_to_move();
    legal_moves(position).iter().any(|&mv| {
        let child = position.make_move(mv);
        match child.formation_outcome() {
            Some(FormationOutcome::Won(color)) => return color == us,
            Some(FormationOutcome::Forfeited(color)) => return color != us,
            None => {}
        }
        let replies = legal_moves(&child);
        if replies.is_empty() {
            return true;
        }
        moves > 1
            && replies.iter().all(|&reply| {
                let next = child.make_move(reply);
                match next.formation_outcome() {
                    Some(FormationOutcome::Won(color)) => color == us,
                    Some(FormationOutcome::Forfeited(color)) => color != us,
                    None => forced_win_within(&next, moves - 1),
                }
            })
    })
}

fn quick_engine() -> Engine {
    Engine::new(EngineOptions {
        hash_mib: 4,
        ..EngineOptions::default()
    })
    .unwrap()
}

fn search_to(engine: &mut Engine, game: &Game, depth: u32) -> SearchOutcome {
    let limits = SearchLimits {
        depth: Some(depth),
        ..SearchLimits::default()
    };
    engine.search(game, &limits, &SearchControl::default(), |_| {})
}

/// The engine finds the forced win of exactly `moves` moves that the brute
/// force confirms, and its move keeps the win.
fn assert_mate_in(fen: &str, moves: u32) {
    let position = parse_fen(fen).unwrap();
    assert!(
        forced_win_within(&position, moves),
        "{fen}: no win in {moves}"
    );
    assert!(
        !forced_win_within(&position, moves - 1),
        "{fen}: already a win in {}",
        moves - 1
    );
    // With the network and with the hand-written evaluation.
    for use_network in [true, false] {
        let mut engine = quick_engine();
        let mut options = engine.options;
        options.tuning.use_network = use_network;
        engine.set_options(options).unwrap();
        assert_keeps_the_win(&mut engine, fen, moves);
    }
}

/// `engine` reports the win in `moves` of `fen` and plays a move that keeps it.
fn assert_keeps_the_win(engine: &mut Engine, fen: &str, moves: u32) {
    let position = parse_fen(fen).unwrap();
    let outcome = search_to(engine, &Game::new(position), 2 * moves + 1);
    assert_eq!(outcome.score, Score::Mate(moves as i32), "{fen}");
    let best = outcome.best.expect("a move");
    let after = position.make_move(best);
    let won_now = after.formation_outcome() == Some(FormationOutcome::Won(Color::White));
    assert!(
        won_now
            || legal_moves(&after).iter().all(|&reply| {
                let next = after.make_move(reply);
                next.formation_outcome() == Some(FormationOutcome::Forfeited(Color::Black))
                    || forced_win_within(&next, moves - 1)
            }),
        "{fen}: {best} lets the win go"
    );
}

/// White: five guards around the throne; the queen and the last guard on
/// their way in. Black is far away on the outer ring.
const MATE_IN_1: &str = "6/7/8/9/4GG4/4GQG4/5G4/4G4/8/g6/q5 w";
const MATE_IN_2: &str = "6/7/8/9/4GG4/4G1G4/4QG4/4G4/8/g6/q5 w";
const MATE_IN_3: &str = "6/7/8/9/4GG4/4G1G4/5G4/3GQ4/8/g6/q5 w";

#[test]
fn finds_a_win_in_one() {
    assert_mate_in(MATE_IN_1, 1);
}

#[test]
fn finds_a_win_in_two() {
    assert_mate_in(MATE_IN_2, 2);
}

#[test]
fn finds_a_win_in_three() {
    assert_mate_in(MATE_IN_3, 3);
}

/// A `mate` limit ends the search at the depth that proves a win within it,
/// however large the limit (it is read at its own type, not wrapped).
#[test]
fn a_mate_limit_of_any_size_stops_once_the_win_is_proven() {
    let game = Game::new(parse_fen(MATE_IN_2).unwrap());
    let depth_reached = |mate: u32| {
        let limits = SearchLimits {
            mate: Some(mate),
            depth: Some(20),
            ..SearchLimits::default()
        };
        let outcome = quick_engine().search(&game, &limits, &SearchControl::default(), |_| {});
        assert_eq!(outcome.score, Score::Mate(2), "mate {mate}");
        outcome.depth
    };
    let proven_at = depth_reached(2);
    assert!(
        proven_at < 20,
        "the win in 2 was proven only at depth {proven_at}"
    );
    for mate in [3, i32::MAX as u32, i32::MAX as u32 + 1, u32::MAX] {
        assert_eq!(depth_reached(mate), proven_at, "mate {mate}");
    }
}

/// From a match game: White's queen stands next to the throne among her
/// guards, Black's is far off.
const QUEEN_AMONG_HER_GUARDS: &str = "4g1/7/3g4/4G1G2/4Q5/4G1G3g/3G5q/4G4/g7/1g5/4g1 w 64";

/// Turns one developer switch on.
type SwitchOn = fn(&mut Tuning);

/// An engine with one developer switch turned on.
fn engine_with(switch_on: SwitchOn) -> Engine {
    let mut engine = quick_engine();
    let mut options = engine.options;
    switch_on(&mut options.tuning);
    engine.set_options(options).unwrap();
    engine
}

/// An engine with one developer switch turned on and the quiescence
/// search's formation threats off: they see the races of the tests below
/// on their own (`threats_in_the_quiescence_search_see_a_race_sooner`),
/// which would hide what the other rules do.
fn engine_without_threats(switch_on: SwitchOn) -> Engine {
    let mut engine = engine_with(switch_on);
    let mut options = engine.options;
    options.tuning.quiescence_threats = false;
    engine.set_options(options).unwrap();
    engine
}

/// Futility pruning, internal iterative reductions, reductions by history,
/// the table in the quiescence search, the capture history, the table's
/// bounds as the evaluation, razoring, counter-moves, singular extensions
/// and the cut nodes' extra reduction, off by default, still find every
/// forced win, and each changes
/// the search of a middle game or of an opening where captures are in the
/// air, to the same depth: they act, and not on the moves that decide. The
/// three that only cut make the middle game's smaller.
#[test]
fn search_switches_keep_the_wins_and_change_the_tree() {
    let switches: [(&str, SwitchOn, bool); 11] = [
        ("futility", |tuning| tuning.futility = true, true),
        (
            "iterative reduction",
            |tuning| tuning.iterative_reduction = true,
            true,
        ),
        (
            "history reductions",
            |tuning| tuning.history_reductions = true,
            false,
        ),
        (
            "quiescence table",
            |tuning| tuning.quiescence_table = true,
            false,
        ),
        (
            "capture history",
            |tuning| tuning.capture_history = true,
            false,
        ),
        ("table eval", |tuning| tuning.table_eval = true, false),
        ("razoring", |tuning| tuning.razoring = true, false),
        ("counter-moves", |tuning| tuning.counter_moves = true, false),
        (
            "cut-node reduction",
            |tuning| tuning.params.values[params::Param::CutNodeReduction as usize] = 1,
            true,
        ),
        (
            "killer reduction",
            |tuning| tuning.params.values[params::Param::KillerReduction as usize] = 1,
            false,
        ),
        (
            "singular extensions",
            |tuning| {
                tuning.singular = true;
                // Shallower than it plays, so that it acts at this depth.
                tuning.params.values[params::Param::SingularDepth as usize] = 4;
            },
            false,
        ),
    ];
    let middle_game = Game::new(parse_fen(QUEEN_AMONG_HER_GUARDS).unwrap());
    let opening = Game::new(parse_fen("q1G1g1/7/1G4G1/g8/9g/11/G8G/9/6g1/gG5/4gQ w 4").unwrap());
    let nodes_of = |engine: &mut Engine| {
        (
            search_to(engine, &middle_game, 8).nodes,
            search_to(engine, &opening, 10).nodes,
        )
    };
    // The middle game is a race, where the quiescence search's threats
    // multiply the nodes of some switches' trees: each switch is measured
    // on the tree without them.
    let plain = nodes_of(&mut engine_without_threats(|_| {}));
    for (name, switch_on, only_cuts) in switches {
        for (fen, moves) in [(MATE_IN_1, 1), (MATE_IN_2, 2), (MATE_IN_3, 3)] {
            assert_keeps_the_win(&mut engine_with(switch_on), fen, moves);
        }
        let nodes = nodes_of(&mut engine_without_threats(switch_on));
        let acts = if only_cuts {
            nodes.0 < plain.0
        } else {
            nodes != plain
        };
        assert!(acts, "{name}: {nodes:?} nodes, {plain:?} without");
    }
}

#[test]
fn reports_the_loss_when_the_opponent_wins_next_move() {
    // Black to move cannot reach the gap at e5: White wins next move.
    let fen = MATE_IN_1.replace(" w", " b");
    let outcome = search_to(&mut quick_engine(), &Game::new(parse_fen(&fen).unwrap()), 4);
    assert_eq!(outcome.score, Score::Mate(-1));
}

/// Races to the formation from match games that the engine lost at
/// 10s+0.1s: each time the other side's queen holds the throne with guards
/// around it, and the other side, to move, wins in `moves` moves.
const THRONE_RACES: [(&str, i32); 3] = [
    ("6/7/4g3/4G1g2/g2q1G4/4GQ1G3/3g6/4GGg2/3g4/7/6 w 37", 4),
    ("3g2/7/4g3/4G1G2/3g6/4GQG1g2/3g2G3/4G4/3g2q1/7/6 w 44", 5),
    ("6/7/5g2/2g1G4/4G5/5QGg3/3G1G3q/4g4/2G1g3/1g5/6 w 29", 4),
];

/// A pass by the defender hides the race: the search reduced after it does
/// not see the guards close the ring. With no pass while the other queen
/// holds the throne the winner sees its win at a depth where, with passes
/// allowed, it does not.
#[test]
fn a_pass_does_not_hide_a_race_to_the_formation() {
    let passing_allowed = |tuning: &mut Tuning| {
        tuning.params.values[params::Param::NullMoveThroneGuards as usize] = 6;
    };
    for (fen, moves) in THRONE_RACES {
        let game = Game::new(parse_fen(fen).unwrap());
        let depth = 2 * moves as u32 - 2;
        let seen = search_to(&mut engine_without_threats(|_| {}), &game, depth).score;
        assert_eq!(seen, Score::Mate(moves), "{fen}");
        // Nor does a rising evaluation, which would let reverse futility
        // cut the defender's node.
        let improving = |tuning: &mut Tuning| tuning.improving = true;
        let seen = search_to(&mut engine_without_threats(improving), &game, depth).score;
        assert_eq!(seen, Score::Mate(moves), "{fen} with Search Improving");
        let hidden = search_to(&mut engine_without_threats(passing_allowed), &game, depth).score;
        assert_ne!(
            hidden,
            Score::Mate(moves),
            "{fen}: found with passes allowed"
        );
    }
}

/// `Search QuiescenceThreats`: the quiescence search tries
/// the steps that threaten the formation, and the reply must answer them,
/// so the winner of a race sees its win two plies sooner than without.
#[test]
fn threats_in_the_quiescence_search_see_a_race_sooner() {
    let (fen, moves) = THRONE_RACES[0];
    let game = Game::new(parse_fen(fen).unwrap());
    let depth = 2 * moves as u32 - 4;
    let seen = search_to(&mut quick_engine(), &game, depth).score;
    assert_eq!(seen, Score::Mate(moves));
    let hidden = search_to(&mut engine_without_threats(|_| {}), &game, depth).score;
    assert_ne!(hidden, Score::Mate(moves), "found without the threats");
}

/// A race of docs/throne-races-10s.txt that the static evaluation and late,
/// reduced ring steps hide as a pass does: the winner, to move, wins in 5
/// moves.
const RING_RACE: &str = "6/7/2G5/5G3/4gg4/1Q1G1qgG3/10/2g2g1G1/4gG2/7/6 b 32";

/// Once a formation threat in the quiescence search is answered by captures
/// alone, and a side that can complete the formation is known to win, the
/// search sees this race of docs/throne-races-10s.txt at depth 7; it needed
/// depth 11 while every answer was searched. The winner, to move, wins in 5
/// moves.
#[test]
fn only_captures_answer_a_threat_below_the_horizon() {
    let fen = "6/3G3/3G4/4gg3/3G6/4gq1gG2/2G2g4/5Q3/2g2G2/7/6 b 31";
    let game = Game::new(parse_fen(fen).unwrap());
    assert_eq!(
        search_to(&mut quick_engine(), &game, 7).score,
        Score::Mate(5)
    );
}

/// `Search StaticPruningThroneGuards` and `Search RingStepThroneGuards`,
/// off by default: with both at 2 (no reverse futility pruning for the
/// defender, every step into the ring searched at full depth while a queen
/// holds the throne with two guards) the winner sees the race at depth 7;
/// with either rule alone it does not.
#[test]
fn the_race_rules_see_through_the_static_evaluation_and_reduced_ring_steps() {
    fn no_static_pruning(tuning: &mut Tuning) {
        tuning.params.values[params::Param::StaticPruningThroneGuards as usize] = 2;
    }
    fn full_ring_steps(tuning: &mut Tuning) {
        tuning.params.values[params::Param::RingStepThroneGuards as usize] = 2;
    }
    fn both(tuning: &mut Tuning) {
        no_static_pruning(tuning);
        full_ring_steps(tuning);
    }
    let game = Game::new(parse_fen(RING_RACE).unwrap());
    let seen = search_to(&mut engine_without_threats(both), &game, 7).score;
    assert_eq!(seen, Score::Mate(5));
    for (name, one_rule) in [
        (
            "only StaticPruningThroneGuards",
            no_static_pruning as SwitchOn,
        ),
        ("only RingStepThroneGuards", full_ring_steps),
        ("neither", |_: &mut Tuning| {}),
    ] {
        let hidden = search_to(&mut engine_without_threats(one_rule), &game, 7).score;
        assert_ne!(hidden, Score::Mate(5), "found with {name}");
    }
}

/// `Search RaceExtensionThroneGuards`, off by default: at 3, the reply to a
/// guard's step next to its queen on the throne, once three or more of her
/// guards stand there, is searched a ply deeper. In a race of
/// docs/throne-races-10s.txt the winner, to move, then sees its win at
/// depth 6; without the extension it needs 8.
#[test]
fn the_race_extension_follows_a_race_to_the_formation_to_its_end() {
    fn race_extension(tuning: &mut Tuning) {
        tuning.params.values[params::Param::RaceExtensionThroneGuards as usize] = 3;
    }
    let is_win = |score: Score| matches!(score, Score::Mate(moves) if moves > 0);
    let fen = "6/7/3g1g2/4GG3/3G6/3g1Q1Gq2/4G5/1g3G3/3g1g2/7/6 w 35";
    let game = Game::new(parse_fen(fen).unwrap());
    let seen = search_to(&mut engine_with(race_extension), &game, 7).score;
    assert!(is_win(seen), "{seen:?}");
    let hidden = search_to(&mut quick_engine(), &game, 7).score;
    assert!(!is_win(hidden), "found without the extension");
}

#[test]
fn never_completes_the_ring_without_the_queen() {
    // Stepping d4-e5 would close the ring while the queen is off the throne:
    // a forfeit. The engine must not play it.
    let position = parse_fen(MATE_IN_3).unwrap();
    for depth in 1..=4 {
        let outcome = search_to(&mut quick_engine(), &Game::new(position), depth);
        let after = position.make_move(outcome.best.unwrap());
        assert_eq!(after.formation_outcome(), None, "depth {depth}");
    }
}

#[test]
fn node_and_depth_limits_are_exact() {
    let game = Game::new(parse_fen(START_FEN).unwrap());
    let limits = SearchLimits {
        nodes: Some(5000),
        ..SearchLimits::default()
    };
    let outcome = quick_engine().search(&game, &limits, &SearchControl::default(), |_| {});
    assert_eq!(outcome.nodes, 5000);
    let mut depths = Vec::new();
    let outcome = quick_engine().search(
        &game,
        &SearchLimits {
            depth: Some(3),
            ..SearchLimits::default()
        },
        &SearchControl::default(),
        |report| depths.push(report.depth),
    );
    assert_eq!(depths, vec![1, 2, 3]);
    assert_eq!(outcome.depth, 3);
}

/// A search cut short by its node limit plays a move its last, unfinished
/// iteration proved better than the last finished one's best, and says so
/// first: the last report is of that deeper search and starts with it.
#[test]
fn a_move_proven_better_in_an_unfinished_iteration_is_played() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let mut switched = 0;
    for _ in 0..12 {
        let mut position = parse_fen(START_FEN).unwrap();
        for _ in 0..rng.random_range(10..40) {
            let moves = legal_moves(&position);
            if moves.is_empty() {
                break;
            }
            position = position.make_move(moves.as_slice()[rng.random_range(0..moves.len())]);
        }
        if legal_moves(&position).is_empty() {
            continue;
        }
        for nodes in [3_000, 10_000, 30_000] {
            let mut reports: Vec<SearchReport> = Vec::new();
            let outcome = quick_engine().search(
                &Game::new(position),
                &SearchLimits {
                    nodes: Some(nodes),
                    ..SearchLimits::default()
                },
                &SearchControl::default(),
                |report| reports.push(report.clone()),
            );
            let best = outcome.best.unwrap();
            assert!(legal_moves(&position).iter().any(|&mv| mv == best));
            let last = reports.last().unwrap();
            assert_eq!(last.pv[0], best);
            let finished = reports
                .iter()
                .rfind(|report| report.depth == outcome.depth)
                .unwrap();
            if finished.pv[0] != best {
                assert_eq!(last.depth, outcome.depth + 1);
                assert_eq!(last.nodes, outcome.nodes, "the report counts every node");
                switched += 1;
            }
        }
    }
    assert!(switched > 0, "no unfinished iteration changed the move");
}

#[test]
fn a_search_stopped_at_once_still_returns_a_legal_move() {
    let position = parse_fen(START_FEN).unwrap();
    let control = SearchControl::default();
    control.stop.store(true, Ordering::Relaxed);
    let outcome = quick_engine().search(
        &Game::new(position),
        &SearchLimits::default(),
        &control,
        |_| {},
    );
    let best = outcome.best.expect("a move");
    assert!(legal_moves(&position).iter().any(|&mv| mv == best));
}

#[test]
fn a_forced_move_under_a_clock_is_played_after_one_iteration() {
    // White's only move is the guard g6f5.
    let game = Game::new(parse_fen("6/7/8/9/4gg4/4gQG4/6g3/9/8/7/q5 w").unwrap());
    assert_eq!(legal_moves(game.position()).len(), 1);
    let clock = SearchLimits {
        clock: Some(Clock {
            time: std::time::Duration::from_secs(60),
            ..Clock::default()
        }),
        ..SearchLimits::default()
    };
    let outcome = quick_engine().search(&game, &clock, &SearchControl::default(), |_| {});
    assert_eq!(outcome.depth, 1);
    assert_eq!(
        outcome.best.map(|mv| mv.to_string()).as_deref(),
        Some("g6f5")
    );
    // A depth asked for is still searched.
    assert_eq!(search_to(&mut quick_engine(), &game, 4).depth, 4);
}

#[test]
fn searchmoves_restricts_the_root() {
    let position = parse_fen(START_FEN).unwrap();
    let only = legal_moves(&position).as_slice()[5];
    let limits = SearchLimits {
        depth: Some(4),
        searchmoves: vec![only],
        ..SearchLimits::default()
    };
    let outcome = quick_engine().search(
        &Game::new(position),
        &limits,
        &SearchControl::default(),
        |_| {},
    );
    assert_eq!(outcome.best, Some(only));
}

#[test]
fn multipv_reports_distinct_lines_best_first() {
    let game = Game::new(parse_fen(START_FEN).unwrap());
    let mut engine = Engine::new(EngineOptions {
        hash_mib: 4,
        multipv: 3,
        ..EngineOptions::default()
    })
    .unwrap();
    let mut last = Vec::new();
    search_to_with(&mut engine, &game, 4, |report| {
        if report.multipv == 1 {
            last.clear();
        }
        last.push(report.clone());
    });
    assert_eq!(
        last.iter().map(|r| r.multipv).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let firsts: Vec<Move> = last.iter().map(|r| r.pv[0]).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
    let centi = |score: Score| match score {
        Score::Centi(value) => value,
        Score::Mate(moves) => moves.signum() * MATE,
    };
    assert!(centi(last[0].score) >= centi(last[1].score));
    assert!(centi(last[1].score) >= centi(last[2].score));
}

fn search_to_with(
    engine: &mut Engine,
    game: &Game,
    depth: u32,
    report: impl FnMut(&SearchReport),
) -> SearchOutcome {
    let limits = SearchLimits {
        depth: Some(depth),
        ..SearchLimits::default()
    };
    engine.search(game, &limits, &SearchControl::default(), report)
}

#[test]
fn infinite_search_waits_for_stop() {
    let game = Game::new(parse_fen(MATE_IN_1).unwrap());
    let control = SearchControl::default();
    let stopper = control.stop.clone();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        stopper.store(true, Ordering::Relaxed);
    });
    let limits = SearchLimits {
        infinite: true,
        ..SearchLimits::default()
    };
    let outcome = quick_engine().search(&game, &limits, &control, |_| {});
    waiter.join().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(outcome.score, Score::Mate(1));
}

#[test]
fn with_two_threads_the_last_report_is_the_move_played() {
    // Whichever thread's iteration decides, the last info line names it:
    // the last completed depth, or the unfinished one after it where a
    // move was proven better.
    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    for text in ["f1f2", "f11f10"] {
        game.play_text(text).unwrap();
    }
    let mut engine = Engine::new(EngineOptions {
        hash_mib: 8,
        threads: 2,
        ..EngineOptions::default()
    })
    .unwrap();
    for _ in 0..5 {
        let limits = SearchLimits {
            movetime: Some(std::time::Duration::from_millis(60)),
            ..SearchLimits::default()
        };
        let mut last = None;
        let outcome = engine.search(&game, &limits, &SearchControl::default(), |report| {
            last = Some((report.depth, report.pv[0]));
        });
        let (depth, first) = last.unwrap();
        assert_eq!(first, outcome.best.unwrap());
        assert!(
            depth == outcome.depth || depth == outcome.depth + 1,
            "{depth} {}",
            outcome.depth
        );
    }
}

#[test]
fn two_threads_agree_on_a_forced_win() {
    let game = Game::new(parse_fen(MATE_IN_2).unwrap());
    let mut engine = Engine::new(EngineOptions {
        hash_mib: 4,
        threads: 2,
        ..EngineOptions::default()
    })
    .unwrap();
    assert_eq!(search_to(&mut engine, &game, 6).score, Score::Mate(2));
}

#[test]
fn a_repeated_position_scores_as_a_draw() {
    // Both sides shuffle; after the cycle the position of the game's start
    // is one step away, and playing into it again is scored as a draw.
    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    for text in ["f1e1", "f11g11", "e1f1"] {
        game.play_text(text).unwrap();
    }
    let back = parse_move(game.position(), "g11f11").unwrap();
    let limits = SearchLimits {
        depth: Some(1),
        searchmoves: vec![back],
        ..SearchLimits::default()
    };
    let outcome = quick_engine().search(&game, &limits, &SearchControl::default(), |_| {});
    assert_eq!(outcome.score, Score::Centi(0));
}

#[test]
fn self_play_from_varied_openings_only_plays_legal_moves() {
    let mut engine = quick_engine();
    let mut state = 0x5EED_u64;
    let mut searched = 0;
    for game_index in 0..50 {
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        engine.clear();
        for ply in 0..200 {
            if game.result() != GameResult::Ongoing {
                break;
            }
            let moves = legal_moves(game.position());
            let mv = if ply < 6 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                moves.as_slice()[(state % moves.len() as u64) as usize]
            } else {
                let depth = 2 + (game_index % 2);
                let best = search_to(&mut engine, &game, depth).best.expect("a move");
                assert!(
                    moves.iter().any(|&legal| legal == best),
                    "game {game_index} ply {ply}: {best} is illegal"
                );
                searched += 1;
                best
            };
            game.play(mv);
        }
    }
    assert!(searched > 2000, "games ended too soon: {searched} searches");
}

/// One ply deep, without quiescence, a root score is the best of the
/// children's evaluations. With `Search Progress` on, each is faded by the
/// plies without progress that lead to it, the game's own included: after
/// `ProgressPlies` of them a move around a ring is worth exactly half, and
/// a move inward (which starts the count again) its full value.
#[test]
fn progress_fades_the_score_with_the_games_plies_without_progress() {
    let half_after = 4;
    let search_gated =
        |progress: bool, behind_percent: i32, margin: i32, game: &Game, moves: &[Move]| {
            let mut tuning = Tuning {
                progress,
                quiescence: false,
                ..Tuning::default()
            };
            tuning.params.values[params::Param::ProgressPlies as usize] = half_after;
            tuning.params.values[params::Param::ProgressGrace as usize] = 0;
            tuning.params.values[params::Param::ProgressBehindPercent as usize] = behind_percent;
            tuning.params.values[params::Param::ProgressMargin as usize] = margin;
            let mut engine = Engine::new(EngineOptions {
                hash_mib: 4,
                tuning,
                ..EngineOptions::default()
            })
            .unwrap();
            let limits = SearchLimits {
                depth: Some(1),
                searchmoves: moves.to_vec(),
                ..SearchLimits::default()
            };
            match engine
                .search(game, &limits, &SearchControl::default(), |_| {})
                .score
            {
                Score::Centi(value) => value,
                Score::Mate(moves) => panic!("mate in {moves}"),
            }
        };
    let search_faded = |progress: bool, behind_percent: i32, game: &Game, moves: &[Move]| {
        search_gated(progress, behind_percent, 0, game, moves)
    };
    let search =
        |progress: bool, game: &Game, moves: &[Move]| search_faded(progress, 0, game, moves);
    let mut walked = Game::new(parse_fen(QUEEN_AMONG_HER_GUARDS).unwrap());
    while walked.plies_without_progress() < half_after as usize {
        let position = *walked.position();
        let around = legal_moves(&position)
            .iter()
            .copied()
            .find(|&mv| !position.is_progress(mv))
            .expect("a move around a ring");
        walked.play(around);
    }
    let fresh = Game::new(*walked.position());
    let (inward, around): (Vec<Move>, Vec<Move>) = legal_moves(walked.position())
        .iter()
        .partition(|&&mv| walked.position().is_progress(mv));
    assert!(!inward.is_empty() && !around.is_empty());
    let around_full = search(false, &walked, &around);
    assert!(
        around_full > 100,
        "White should stand better: {around_full}"
    );
    assert_eq!(search(true, &walked, &around), around_full / 2);
    // From a fresh start the children have gone one ply without progress.
    let one_ply_faded = 2 * half_after - 1;
    assert_eq!(
        search(true, &fresh, &around),
        around_full * one_ply_faded / (2 * half_after)
    );
    assert_eq!(
        search(true, &walked, &inward),
        search(false, &walked, &inward)
    );
    // With a margin, only a search whose root stands that far ahead by its
    // static evaluation fades.
    let root_static = crate::search::nnue::Network::embedded().evaluate_position(walked.position());
    assert!(root_static > 0, "White should stand better: {root_static}");
    assert_eq!(
        search_gated(true, 0, root_static, &walked, &around),
        around_full / 2
    );
    assert_eq!(
        search_gated(true, 0, root_static + 1, &walked, &around),
        around_full
    );
    // Black, behind, is searched as if nothing faded.
    let mut behind = walked.clone();
    behind.play(around[0]);
    let black_moves: Vec<Move> = legal_moves(behind.position()).iter().copied().collect();
    let unfaded = search(false, &behind, &black_moves);
    assert!(unfaded < -100, "Black should stand worse: {unfaded}");
    assert_eq!(search(true, &behind, &black_moves), unfaded);
    // Unless the side behind fades too: then a move around a ring, the
    // count past `half_after`, leaves it half its disadvantage.
    let black_around: Vec<Move> = black_moves
        .iter()
        .copied()
        .filter(|&mv| !behind.position().is_progress(mv))
        .collect();
    let around_unfaded = search(false, &behind, &black_around);
    assert!(around_unfaded < -100);
    assert_eq!(
        search_faded(true, 100, &behind, &black_around),
        around_unfaded / 2
    );
    assert_eq!(
        search_faded(true, 50, &behind, &black_around),
        around_unfaded + (around_unfaded / 2 - around_unfaded) / 2
    );
    // The side behind never stands a margin ahead: nothing fades.
    assert_eq!(
        search_gated(true, 100, 1, &behind, &black_around),
        around_unfaded
    );
}

#[test]
fn improving_compares_with_the_side_to_moves_own_earlier_evaluation() {
    use super::negamax::improving;
    // The opponent's evaluation at the ply in between never counts.
    assert!(improving(&[Some(10), Some(500)], Some(20)));
    assert!(!improving(&[Some(30), Some(-500)], Some(20)));
    assert!(!improving(&[Some(20), None], Some(20)));
    // Without an evaluation at its last turn, the turn before stands in.
    assert!(!improving(&[Some(40), None, None, None], Some(20)));
    assert!(improving(&[Some(10), None, None, None], Some(20)));
    // Unknown either way counts as improving.
    assert!(improving(&[None, None, None, None], Some(20)));
    assert!(improving(&[Some(10)], Some(-20)));
    assert!(improving(&[Some(900), Some(0)], None));
}

/// A hash table larger than the system can give is refused: a new engine
/// is not made, and an engine keeps its options and its table.
#[test]
fn a_table_the_system_will_not_give_changes_nothing() {
    let too_large = EngineOptions {
        hash_mib: usize::MAX >> 20,
        ..EngineOptions::default()
    };
    assert!(Engine::new(too_large).is_err());
    let mut engine = quick_engine();
    let before = engine.options;
    let mut options = before;
    options.hash_mib = usize::MAX >> 20;
    options.multipv = 3;
    assert!(matches!(
        engine.set_options(options),
        Err(TableTooLarge { mib, .. }) if mib == usize::MAX >> 20
    ));
    assert_eq!(engine.options.hash_mib, before.hash_mib);
    assert_eq!(engine.options.multipv, before.multipv);
    let outcome = search_to(&mut engine, &Game::new(start_position()), 2);
    assert!(outcome.best.is_some());
}

/// Options changed by adjustment never touch the table: a `Hash` set in
/// the change is ignored, and the rest takes effect.
#[test]
fn an_adjustment_changes_everything_but_the_table() {
    let mut engine = quick_engine();
    let hash_mib = engine.options.hash_mib;
    engine.adjust_options(|options| {
        options.hash_mib = usize::MAX >> 20;
        options.multipv = 3;
        options.threads = 2;
    });
    assert_eq!(engine.options.hash_mib, hash_mib);
    assert_eq!(engine.options.multipv, 3);
    assert_eq!(engine.histories.len(), 2);
    let outcome = search_to(&mut engine, &Game::new(start_position()), 2);
    assert!(outcome.best.is_some());
}
