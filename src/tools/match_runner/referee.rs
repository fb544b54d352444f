//! Plays one game between two engine processes, with the rules core as
//! referee: clocks, move checks, stalls, crashes and adjudication.

use super::engine::{EngineProcess, Failure};
use super::openings::Opening;
use super::options::{ClockControl, EngineSpec, Limits, Timeouts};
use super::record::{Ending, GameRecord, MoveRecord, ScoreRecord, Verdict};
use crate::rules::{Color, GameResult, START_FEN, to_fen};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What one game needs besides its engines.
pub struct GameSetup<'a> {
    /// 1-based number in the schedule.
    pub number: u64,
    /// 1-based round.
    pub round: u64,
    /// Where it starts.
    pub opening: &'a Opening,
    /// White's engine description.
    pub white: &'a EngineSpec,
    /// Black's engine description.
    pub black: &'a EngineSpec,
    /// Engine timeouts.
    pub timeouts: &'a Timeouts,
    /// Grace before a time forfeit.
    pub time_margin: Duration,
    /// Draw after this many full moves.
    pub max_moves: Option<u32>,
    /// Set when the run is stopping: the game is abandoned.
    pub abort: &'a AtomicBool,
}

/// A side's clock during a game.
struct SideClock {
    control: Option<ClockControl>,
    left: Duration,
    moves_made: u32,
}

impl SideClock {
    fn new(limits: &Limits) -> SideClock {
        SideClock {
            control: limits.clock,
            left: limits.clock.map_or(Duration::ZERO, |c| c.base),
            moves_made: 0,
        }
    }

    fn moves_to_go(&self) -> Option<u32> {
        let per_period = self.control?.moves?;
        Some(per_period - self.moves_made % per_period)
    }

    /// Charges `used` for a move; false when the clock fell beyond the margin.
    fn charge(&mut self, used: Duration, margin: Duration) -> bool {
        let Some(control) = self.control else {
            return true;
        };
        if used > self.left.saturating_add(margin) {
            return false;
        }
        // Saturating: a clock of a year plus a year of increments per move
        // must not overflow in a long game.
        self.left = self
            .left
            .saturating_sub(used)
            .saturating_add(control.increment);
        self.moves_made = self.moves_made.wrapping_add(1);
        if control
            .moves
            .is_some_and(|per_period| self.moves_made.is_multiple_of(per_period))
        {
            self.left = self.left.saturating_add(control.base);
        }
        true
    }
}

/// How a game in progress stopped.
struct Stop {
    verdict: Verdict,
    ending: Ending,
    reason: String,
}

impl Stop {
    fn loss(loser: Color, ending: Ending, what: &str) -> Stop {
        Stop {
            verdict: Verdict::Win(!loser),
            ending,
            reason: format!("{} {what}", loser.name()),
        }
    }

    fn failure(loser: Color, failure: Failure) -> Option<Stop> {
        match failure {
            Failure::Crashed => Some(Stop::loss(loser, Ending::Crash, "crashed")),
            Failure::TimedOut => Some(Stop::loss(loser, Ending::Stall, "stalled")),
            Failure::Aborted => None,
        }
    }

    fn from_rules(result: GameResult) -> Option<Stop> {
        let ending = Ending::by_rules(result)?;
        let verdict = match result {
            GameResult::Win { winner, .. } => Verdict::Win(winner),
            _ => Verdict::Draw,
        };
        Some(Stop {
            verdict,
            ending,
            reason: result.describe(),
        })
    }
}

/// What an engine said while thinking.
#[derive(Default)]
struct Thinking {
    score: Option<ScoreRecord>,
    depth: Option<u32>,
    bestmove: Option<String>,
}

impl Thinking {
    /// Takes one line of output; true once it is the `bestmove`.
    fn read(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("bestmove") => {
                self.bestmove = Some(words.next().unwrap_or_default().to_string());
                true
            }
            Some("info") => {
                // `info string` runs to the end of the line and is free text:
                // `info string depth 7` reports no depth.
                let words: Vec<&str> = words.take_while(|word| *word != "string").collect();
                // Only the main line speaks for the move that will be played.
                let secondary = words
                    .windows(2)
                    .any(|pair| pair[0] == "multipv" && pair[1] != "1");
                if secondary {
                    return false;
                }
                for (index, word) in words.iter().enumerate() {
                    let next = words.get(index + 1);
                    let after = words.get(index + 2);
                    match (*word, next, after) {
                        ("depth", Some(d), _) => self.depth = d.parse().ok().or(self.depth),
                        ("score", Some(&"cp"), Some(v)) => {
                            self.score = v.parse().ok().map(ScoreRecord::Cp).or(self.score);
                        }
                        ("score", Some(&"mate"), Some(v)) => {
                            self.score = v.parse().ok().map(ScoreRecord::Mate).or(self.score);
                        }
                        _ => {}
                    }
                }
                false
            }
            _ => false,
        }
    }
}

fn go_command(
    limits: &Limits,
    clocks: &[SideClock; 2],
    mover: Color,
    stall: Duration,
) -> (String, Duration) {
    let mut command = String::from("go");
    let mut bound = stall;
    if let Some(movetime) = limits.movetime {
        command.push_str(&format!(" movetime {}", movetime.as_millis()));
        bound = movetime;
    } else if limits.clock.is_some() {
        let own = &clocks[mover.index()];
        // A side without a clock is shown the mover's, so that `go` stays well-formed.
        let other = &clocks[(!mover).index()];
        let other = if other.control.is_some() { other } else { own };
        let (white, black) = match mover {
            Color::White => (own, other),
            Color::Black => (other, own),
        };
        let increment = |c: &SideClock| c.control.map_or(0, |c| c.increment.as_millis());
        command.push_str(&format!(
            " wtime {} btime {} winc {} binc {}",
            white.left.as_millis(),
            black.left.as_millis(),
            increment(white),
            increment(black)
        ));
        if let Some(moves) = own.moves_to_go() {
            command.push_str(&format!(" movestogo {moves}"));
        }
        bound = own.left;
    }
    if let Some(depth) = limits.depth {
        command.push_str(&format!(" depth {depth}"));
    }
    if let Some(nodes) = limits.nodes {
        command.push_str(&format!(" nodes {nodes}"));
    }
    (command, bound)
}

/// Makes sure an engine slot holds a started engine that knows a new game begins.
fn prepare(
    slot: &mut Option<EngineProcess>,
    spec: &EngineSpec,
    color: Color,
    setup: &GameSetup,
) -> Result<(), Option<Stop>> {
    if slot.is_none() {
        match EngineProcess::start(spec, setup.timeouts, setup.abort) {
            Ok(engine) => *slot = Some(engine),
            Err(error) => {
                log::warn!("engine {} failed to start: {error}", spec.name);
                if setup.abort.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err(None);
                }
                return Err(Some(Stop::loss(
                    color,
                    Ending::StartupFailure,
                    "failed to start",
                )));
            }
        }
    }
    let Some(engine) = slot.as_mut() else {
        return Err(None);
    };
    engine
        .send("ucinewgame")
        .and_then(|()| engine.sync(setup.timeouts.ready, setup.abort))
        .map_err(|failure| Stop::failure(color, failure))
}

/// Plays the game; `None` when it was abandoned because the run is stopping.
/// An engine that crashed, stalled or failed to start is dropped from its slot.
pub fn play_game(
    setup: &GameSetup,
    white: &mut Option<EngineProcess>,
    black: &mut Option<EngineProcess>,
) -> Option<GameRecord> {
    let mut game = setup.opening.game();
    let mut moves = Vec::new();
    let outcome = (|| -> Option<Stop> {
        if let Err(stop) = prepare(white, setup.white, Color::White, setup) {
            return stop;
        }
        if let Err(stop) = prepare(black, setup.black, Color::Black, setup) {
            return stop;
        }
        let limits = [&setup.white.limits, &setup.black.limits];
        let mut clocks = [SideClock::new(limits[0]), SideClock::new(limits[1])];
        let start_fen = to_fen(&setup.opening.start);
        let position_prefix = if start_fen == START_FEN {
            "position startpos".to_string()
        } else {
            format!("position fen {start_fen}")
        };
        loop {
            if let Some(stop) = Stop::from_rules(game.result()) {
                return Some(stop);
            }
            if let Some(limit) = setup.max_moves
                && game.moves().len() as u64 >= 2 * u64::from(limit)
            {
                return Some(Stop {
                    verdict: Verdict::Draw,
                    ending: Ending::Adjudication,
                    reason: format!("draw by adjudication after {limit} moves"),
                });
            }
            let mover = game.position().side_to_move();
            let slot = if mover == Color::White {
                &mut *white
            } else {
                &mut *black
            };
            let engine = slot.as_mut()?;
            if let Err(failure) = engine.sync(setup.timeouts.ready, setup.abort) {
                return Stop::failure(mover, failure);
            }
            let mut position = position_prefix.clone();
            if !game.moves().is_empty() {
                position.push_str(" moves");
                for mv in game.moves() {
                    position.push_str(&format!(" {mv}"));
                }
            }
            let (go, bound) =
                go_command(limits[mover.index()], &clocks, mover, setup.timeouts.stall);
            let mut thinking = Thinking::default();
            let sent = engine.send(&position).and_then(|()| engine.send(&go));
            let started = Instant::now();
            let waited = sent.and_then(|()| {
                engine.wait_for(
                    bound.saturating_add(setup.time_margin),
                    setup.abort,
                    |line| thinking.read(line),
                )
            });
            match waited {
                Ok(()) => {}
                Err(Failure::TimedOut) => {
                    // Out of time; whether it still answers tells a slow engine from a hung one.
                    let answered = engine.send("stop").and_then(|()| {
                        engine.wait_for(setup.timeouts.ready, setup.abort, |line| {
                            thinking.read(line)
                        })
                    });
                    return match answered {
                        Ok(())
                            if limits[mover.index()].clock.is_some()
                                || limits[mover.index()].movetime.is_some() =>
                        {
                            Some(Stop::loss(mover, Ending::TimeForfeit, "loses on time"))
                        }
                        Ok(()) | Err(Failure::TimedOut) => {
                            Some(Stop::loss(mover, Ending::Stall, "stalled"))
                        }
                        Err(failure) => Stop::failure(mover, failure),
                    };
                }
                Err(failure) => return Stop::failure(mover, failure),
            }
            let used = started.elapsed();
            if !clocks[mover.index()].charge(used, setup.time_margin) {
                return Some(Stop::loss(mover, Ending::TimeForfeit, "loses on time"));
            }
            if limits[mover.index()]
                .movetime
                .is_some_and(|movetime| used > movetime.saturating_add(setup.time_margin))
            {
                return Some(Stop::loss(mover, Ending::TimeForfeit, "loses on time"));
            }
            let text = thinking.bestmove.unwrap_or_default();
            if game.play_text(&text).is_err() {
                return Some(Stop::loss(
                    mover,
                    Ending::IllegalMove,
                    &format!("illegal move {text}"),
                ));
            }
            moves.push(MoveRecord {
                text,
                score: thinking.score,
                depth: thinking.depth,
                time_ms: u64::try_from(used.as_millis()).unwrap_or(u64::MAX),
            });
        }
    })()?;
    if outcome.ending.breaks_engine() {
        let loser_slot = match outcome.verdict {
            Verdict::Win(Color::White) => black,
            _ => white,
        };
        *loser_slot = None;
    }
    Some(GameRecord {
        game: setup.number,
        round: setup.round,
        white: setup.white.name.clone(),
        black: setup.black.name.clone(),
        result: outcome.verdict,
        termination: outcome.ending,
        reason: outcome.reason,
        fen: to_fen(&setup.opening.start),
        book: setup.opening.moves.clone(),
        moves,
        white_time_control: setup.white.limits.describe(),
        black_time_control: setup.black.limits.describe(),
        final_fen: to_fen(game.position()),
        date: super::record::today(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::match_runner::options::MAX_TIME;

    fn clock_limits(moves: Option<u32>, base_ms: u64, inc_ms: u64) -> Limits {
        Limits {
            clock: Some(ClockControl {
                moves,
                base: Duration::from_millis(base_ms),
                increment: Duration::from_millis(inc_ms),
            }),
            movetime: None,
            depth: None,
            nodes: None,
        }
    }

    #[test]
    fn clocks_add_increments_and_new_periods() {
        let mut clock = SideClock::new(&clock_limits(Some(2), 1000, 100));
        assert_eq!(clock.moves_to_go(), Some(2));
        assert!(clock.charge(Duration::from_millis(400), Duration::ZERO));
        assert_eq!(clock.left, Duration::from_millis(700));
        assert_eq!(clock.moves_to_go(), Some(1));
        assert!(clock.charge(Duration::from_millis(200), Duration::ZERO));
        assert_eq!(clock.left, Duration::from_millis(1600));
        assert!(!clock.charge(Duration::from_millis(1700), Duration::from_millis(50)));
    }

    #[test]
    fn the_longest_clocks_never_overflow() {
        let year = MAX_TIME.as_millis() as u64;
        let mut clock = SideClock::new(&clock_limits(Some(1), year, year));
        for _ in 0..1000 {
            assert!(clock.charge(Duration::ZERO, MAX_TIME));
        }
        assert!(clock.left >= MAX_TIME);
        assert!(!clock.charge(Duration::MAX, MAX_TIME));
    }

    #[test]
    fn go_commands_carry_both_clocks() {
        let limits = clock_limits(None, 10_000, 100);
        let clocks = [SideClock::new(&limits), SideClock::new(&limits)];
        let (go, bound) = go_command(&limits, &clocks, Color::Black, Duration::ZERO);
        assert_eq!(go, "go wtime 10000 btime 10000 winc 100 binc 100");
        assert_eq!(bound, Duration::from_secs(10));
        let fixed = Limits {
            clock: None,
            movetime: None,
            depth: Some(3),
            nodes: Some(500),
        };
        let (go, bound) = go_command(&fixed, &clocks, Color::White, Duration::from_secs(7));
        assert_eq!(
            (go.as_str(), bound),
            ("go depth 3 nodes 500", Duration::from_secs(7))
        );
    }

    #[test]
    fn info_lines_leave_the_last_score_and_depth() {
        let mut thinking = Thinking::default();
        assert!(!thinking.read("info depth 3 seldepth 5 score cp -12 nodes 100 pv f1f2"));
        assert!(!thinking.read("info depth 4 score mate 2"));
        assert!(!thinking.read("info string depth x score cp"));
        assert!(!thinking.read("info string depth 7 score cp 900"));
        assert!(!thinking.read("info depth 5 string depth 7"));
        assert!(!thinking.read("info depth 9 multipv 2 score cp 50"));
        assert!(thinking.read("bestmove f1f2 ponder f11f10"));
        assert_eq!(thinking.score, Some(ScoreRecord::Mate(2)));
        assert_eq!(thinking.depth, Some(5));
        assert_eq!(thinking.bestmove.as_deref(), Some("f1f2"));
    }
}
