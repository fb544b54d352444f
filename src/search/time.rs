//! Time management: a soft budget checked between iterations and a hard
//! one checked during the search, from the clock (less the move overhead
//! and the delay measured on earlier moves) and `movetime` (used in full);
//! no budget applies while pondering, and the clock restarts when pondering
//! ends.

use super::params::{Param, Params};
use super::{Clock, SearchLimits};
use crate::rules::Color;
use std::time::{Duration, Instant};

/// Moves assumed left in the game when the clock does not say.
const DEFAULT_MOVES_TO_GO: u32 = 30;
/// Never plan for more moves than this (long controls with few moves left
/// in the game would starve every move otherwise).
const MAX_MOVES_TO_GO: u32 = 50;

/// Added to twice the measured delay per move.
const LAG_MARGIN: Duration = Duration::from_millis(1);

/// Measures, over the moves of a game, how much more the caller's clock
/// charges per move than the engine takes from reading `go` to writing
/// `bestmove`: from one move's clock, increment and thinking time and the
/// clock given with the next `go` of the same side. The estimate is the
/// largest recent delay, fading by a quarter a move, so that a busy spell
/// is remembered for a few moves.
#[derive(Clone, Debug, Default)]
pub struct MoveLag {
    last: Option<AnsweredMove>,
    estimate: Option<Duration>,
}

#[derive(Clone, Copy, Debug)]
struct AnsweredMove {
    side: Color,
    clock: Clock,
    thought: Duration,
}

impl MoveLag {
    /// The delay to plan with for a search of `side` on `clock`, learning
    /// from the move answered before it.
    pub fn before_search(&mut self, side: Color, clock: &Clock) -> Option<Duration> {
        if let Some(last) = self.last.take() {
            let charged = (last.clock.time + last.clock.increment).checked_sub(clock.time);
            match charged {
                Some(charged) if last.side == side => {
                    let lag = charged.saturating_sub(last.thought);
                    let faded = self.estimate.map_or(Duration::ZERO, |e| e * 3 / 4);
                    self.estimate = Some(lag.max(faded));
                }
                // A clock with more time than the last one left is a new
                // game (or a caller that resets its clocks): start again.
                _ => self.estimate = None,
            }
        }
        self.estimate
    }

    /// `side`'s search on `clock` answered after `thought`.
    pub fn answered(&mut self, side: Color, clock: Clock, thought: Duration) {
        self.last = Some(AnsweredMove {
            side,
            clock,
            thought,
        });
    }

    /// Forgets the game: a new one starts (or a search whose time does not
    /// count, such as pondering, came between).
    pub fn reset(&mut self) {
        *self = MoveLag::default();
    }
}

/// The two budgets of one move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Budget {
    /// Do not start another iteration after this.
    pub soft: Duration,
    /// Stop the search at once after this.
    pub hard: Duration,
}

/// The budget for `limits`, keeping `overhead` back from the clock and
/// charging it on every move; `None` when no time limit applies. A `movetime` is the time the caller wants
/// spent and is used in full, as Stockfish does: the overhead covers the
/// delay of a clock that keeps running, which `movetime` does not have.
pub fn budget(limits: &SearchLimits, overhead: Duration, params: &Params) -> Option<Budget> {
    let from_movetime = limits.movetime.map(|movetime| {
        let time = movetime.max(Duration::from_millis(1));
        Budget {
            soft: time,
            hard: time,
        }
    });
    let from_clock = limits.clock.map(|clock| {
        let available = match clock.time.checked_sub(overhead) {
            Some(left) if !left.is_zero() => left,
            _ => (clock.time / 10).max(Duration::from_millis(1)),
        };
        let moves_to_go = clock
            .moves_to_go
            .unwrap_or(DEFAULT_MOVES_TO_GO)
            .clamp(1, MAX_MOVES_TO_GO);
        let percent = |param: Param| u32::try_from(params[param]).unwrap_or(0);
        // The delays are lost on every move, not once: a share that ignored
        // them would run the clock down to the reserve whenever they exceed
        // the increment (as on a busy machine) and lose on time at the next
        // longer one. The whole overhead is charged, or twice the delay the
        // game has measured and a millisecond where that is more: charging
        // only the measured delay on a quiet machine, which spends the clock
        // sooner, lost a match (README, Strength). A tenth of the share is
        // always kept, so that a short clock still gets a search.
        let charge = clock.lag.map_or(overhead, |lag| {
            overhead.max(lag.saturating_mul(2).saturating_add(LAG_MARGIN))
        });
        // Clocks may be given up to u64::MAX ms, so every product saturates.
        let share = (available / moves_to_go).saturating_add(
            clock
                .increment
                .saturating_mul(percent(Param::TimeIncrementPercent))
                / 100,
        );
        let optimum = share.saturating_sub(charge).max(share / 10);
        let cap = if moves_to_go == 1 {
            available
        } else {
            available.saturating_mul(3) / 4
        };
        let hard = (optimum.saturating_mul(percent(Param::TimeHardPercent)) / 100).min(cap);
        Budget {
            soft: (optimum.saturating_mul(percent(Param::TimeSoftPercent)) / 100).min(hard),
            hard,
        }
    });
    match (from_movetime, from_clock) {
        (Some(a), Some(b)) => Some(Budget {
            soft: a.soft.min(b.soft),
            hard: a.hard.min(b.hard),
        }),
        (a, b) => a.or(b),
    }
}

/// The clock of one search.
pub struct TimeManager {
    budget: Option<Budget>,
    started: Instant,
    pondering: bool,
}

impl TimeManager {
    /// Times the move from `started` (or, while pondering, from when
    /// pondering ends).
    pub fn new(
        limits: &SearchLimits,
        overhead: Duration,
        started: Instant,
        pondering: bool,
        params: &Params,
    ) -> TimeManager {
        TimeManager {
            budget: budget(limits, overhead, params),
            started,
            pondering,
        }
    }

    /// Pondering ended: the move is now ours and the clock starts.
    pub fn ponder_hit(&mut self) {
        if self.pondering {
            self.pondering = false;
            self.started = Instant::now();
        }
    }

    /// Whether the search is still pondering.
    pub fn pondering(&self) -> bool {
        self.pondering
    }

    fn past(&self, limit: impl Fn(&Budget) -> Duration) -> bool {
        !self.pondering
            && self
                .budget
                .as_ref()
                .is_some_and(|budget| self.started.elapsed() >= limit(budget))
    }

    /// Whether no new iteration should start, with the soft budget scaled
    /// by `percent` (never beyond the hard one).
    pub fn soft_expired(&self, percent: u32) -> bool {
        self.past(|budget| (budget.soft * percent / 100).min(budget.hard))
    }

    /// Whether the search must stop now.
    pub fn hard_expired(&self) -> bool {
        self.past(|budget| budget.hard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Clock;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn clock(time: u64, increment: u64) -> Clock {
        Clock {
            time: ms(time),
            increment: ms(increment),
            ..Clock::default()
        }
    }

    fn with_clock(time: u64, increment: u64, moves_to_go: Option<u32>) -> SearchLimits {
        SearchLimits {
            clock: Some(Clock {
                moves_to_go,
                ..clock(time, increment)
            }),
            ..SearchLimits::default()
        }
    }

    #[test]
    fn a_measured_delay_beyond_the_overhead_is_charged_instead() {
        let unmeasured = budget(&with_clock(1000, 10, None), ms(30), &Params::default()).unwrap();
        let with_lag = |lag| {
            let mut limits = with_clock(1000, 10, None);
            limits.clock.as_mut().unwrap().lag = Some(ms(lag));
            budget(&limits, ms(30), &Params::default()).unwrap()
        };
        assert_eq!(with_lag(1), unmeasured);
        assert_eq!(with_lag(14), unmeasured);
        // The share (970 / 30 + 7.5 ms) less 2 x 16 + 1 ms instead of 30 ms.
        assert_eq!(with_lag(16).hard.as_micros(), 27_333);
        assert!(with_lag(40).soft < unmeasured.soft);
    }

    #[test]
    fn the_delay_is_what_the_clock_charged_beyond_the_thinking() {
        let mut lag = MoveLag::default();
        assert_eq!(lag.before_search(Color::White, &clock(1000, 10)), None);
        lag.answered(Color::White, clock(1000, 10), ms(20));
        // 1000 + 10 - 985 = 25 ms charged for 20 ms of thinking.
        assert_eq!(
            lag.before_search(Color::White, &clock(985, 10)),
            Some(ms(5))
        );
        lag.answered(Color::White, clock(985, 10), ms(20));
        // No delay this time: the estimate fades by a quarter.
        assert_eq!(
            lag.before_search(Color::White, &clock(975, 10)),
            Some(ms(5) * 3 / 4)
        );
        lag.answered(Color::White, clock(975, 10), ms(10));
        // A spike is taken at once.
        assert_eq!(
            lag.before_search(Color::White, &clock(875, 10)),
            Some(ms(100))
        );
        lag.answered(Color::White, clock(875, 10), ms(10));
        // More time than the last clock left: a new game.
        assert_eq!(lag.before_search(Color::White, &clock(60_000, 10)), None);
        lag.answered(Color::White, clock(60_000, 10), ms(10));
        // The other side's clock says nothing about this side's delays.
        assert_eq!(lag.before_search(Color::Black, &clock(50_000, 10)), None);
        lag.answered(Color::Black, clock(50_000, 10), ms(10));
        lag.reset();
        assert_eq!(lag.before_search(Color::Black, &clock(49_000, 10)), None);
    }

    #[test]
    fn no_time_limit_means_no_budget() {
        assert_eq!(
            budget(&SearchLimits::default(), ms(30), &Params::default()),
            None
        );
    }

    #[test]
    fn movetime_is_used_in_full_whatever_the_overhead() {
        for movetime in [1000, 300, 30, 5] {
            let limits = SearchLimits {
                movetime: Some(ms(movetime)),
                ..SearchLimits::default()
            };
            assert_eq!(
                budget(&limits, ms(30), &Params::default()),
                Some(Budget {
                    soft: ms(movetime),
                    hard: ms(movetime)
                }),
                "movetime {movetime}"
            );
        }
    }

    #[test]
    fn a_clock_gives_a_share_of_the_time_and_most_of_the_increment() {
        let b = budget(&with_clock(60_030, 1000, None), ms(30), &Params::default()).unwrap();
        // 60 s over 30 moves plus three quarters of the increment, less the
        // overhead of this move.
        assert_eq!(b.hard, ms(4 * 2720));
        assert_eq!(b.soft, ms(3808));
    }

    #[test]
    fn the_overhead_is_charged_on_every_move() {
        // 1 s + 10 ms: the share (970 / 30 + 7.5 ms) less 30 ms, so that the
        // increment is not spent on the delays and the clock holds up.
        let b = budget(&with_clock(1000, 10, None), ms(30), &Params::default()).unwrap();
        assert_eq!(b.hard.as_micros(), 39_333);
        // Where the overhead eats the whole share, a tenth of it is left.
        let short = budget(&with_clock(400, 10, None), ms(30), &Params::default()).unwrap();
        assert_eq!(short.hard.as_micros(), 7_933);
    }

    #[test]
    fn the_hard_limit_never_exceeds_the_time_left() {
        for (time, increment, moves_to_go) in [
            (100, 5000, None),
            (1000, 0, Some(1)),
            (20, 0, None),
            (5, 10, Some(2)),
        ] {
            let b = budget(
                &with_clock(time, increment, moves_to_go),
                ms(30),
                &Params::default(),
            )
            .unwrap();
            assert!(
                b.hard <= ms(time),
                "{time} {increment} {moves_to_go:?}: {b:?}"
            );
            assert!(b.soft <= b.hard);
            assert!(!b.hard.is_zero());
        }
        let last_move = budget(&with_clock(1000, 0, Some(1)), ms(30), &Params::default()).unwrap();
        assert_eq!(last_move.hard, ms(970));
    }

    #[test]
    fn the_largest_clocks_with_the_largest_time_parameters_still_give_a_budget() {
        let mut params = Params::default();
        for param in [
            Param::TimeHardPercent,
            Param::TimeSoftPercent,
            Param::TimeIncrementPercent,
        ] {
            params.values[param as usize] = param.spec().max;
        }
        for moves_to_go in [None, Some(1), Some(u32::MAX)] {
            let b = budget(
                &with_clock(u64::MAX, u64::MAX, moves_to_go),
                ms(30),
                &params,
            )
            .unwrap();
            assert!(b.soft <= b.hard, "{moves_to_go:?}: {b:?}");
            assert!(b.hard <= ms(u64::MAX), "{moves_to_go:?}: {b:?}");
        }
    }

    #[test]
    fn pondering_suspends_the_clock_until_the_hit() {
        let limits = SearchLimits {
            movetime: Some(ms(1)),
            ..SearchLimits::default()
        };
        let mut manager = TimeManager::new(
            &limits,
            Duration::ZERO,
            Instant::now(),
            true,
            &Params::default(),
        );
        std::thread::sleep(ms(5));
        assert!(!manager.hard_expired());
        manager.ponder_hit();
        assert!(!manager.pondering());
        std::thread::sleep(ms(5));
        assert!(manager.hard_expired());
    }
}
