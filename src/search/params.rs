//! The search's numeric parameters (pruning margins, reductions, the
//! aspiration window, history bonuses, time use), declared once: each with
//! its default, its range and the SPSA tuner's step and learning rate. The
//! protocol exposes each as the developer option `Search <name>`, and
//! `agon spsa` tunes them.

/// One parameter's declaration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// Its name.
    pub name: &'static str,
    /// The developer option that sets it: `Search <name>`.
    pub option: &'static str,
    /// The value the engine plays with.
    pub default: i32,
    /// The smallest value accepted.
    pub min: i32,
    /// The largest value accepted.
    pub max: i32,
    /// The SPSA perturbation at the end of a run, in the parameter's units.
    pub step: f64,
    /// The SPSA learning rate at the end of a run.
    pub rate: f64,
    /// The developer switches (check options) without which it does not
    /// act: `agon spsa` leaves it out unless named, and turns these on in
    /// both engines when it is tuned.
    pub needs: &'static [&'static str],
}

/// The developer switch of the fade without progress.
pub const PROGRESS_SWITCH: &str = "Search Progress";
/// The developer switch of futility pruning.
pub const FUTILITY_SWITCH: &str = "Search Futility";
/// The developer switch of internal iterative reductions.
pub const IIR_SWITCH: &str = "Search IIR";
/// The developer switch of singular extensions.
pub const SINGULAR_SWITCH: &str = "Search Singular";
/// The developer switch of late move reductions by history.
pub const HISTORY_REDUCTION_SWITCH: &str = "Search HistoryReductions";
/// The developer switch of pruning by whether the side to move improves.
pub const IMPROVING_SWITCH: &str = "Search Improving";
/// The developer switch of razoring.
pub const RAZORING_SWITCH: &str = "Search Razoring";

macro_rules! params {
    ($($(#[$doc:meta])* $variant:ident: $default:expr, $min:expr, $max:expr, $step:expr, $rate:expr $(, needs $switch:expr)?;)*) => {
        /// A tunable parameter of the search.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Param {
            $($(#[$doc])* $variant,)*
        }

        /// Every parameter's declaration, in the order of [`Param`].
        pub const SPECS: &[ParamSpec] = &[
            $(ParamSpec {
                name: stringify!($variant),
                option: concat!("Search ", stringify!($variant)),
                default: $default,
                min: $min,
                max: $max,
                step: $step,
                rate: $rate,
                needs: &[$($switch)?],
            },)*
        ];
    };
}

params! {
    /// Half-width of the first aspiration window, centi-guards.
    AspirationDelta: 30, 5, 200, 4.0, 0.002;
    /// Reverse futility pruning applies up to this depth...
    StaticPruningDepth: 6, 1, 12, 1.0, 0.002;
    /// ...when the static evaluation beats beta by this much per ply.
    StaticPruningMargin: 80, 10, 400, 10.0, 0.002;
    /// No reverse futility pruning while the opponent's queen holds the
    /// throne with at least this many of its guards around it (6: never).
    StaticPruningThroneGuards: 6, 0, 6, 0.7, 0.002;
    /// Null-move pruning needs at least this depth.
    NullMoveDepth: 3, 1, 10, 1.0, 0.002;
    /// The null move's search is this many plies shallower...
    NullMoveReduction: 3, 1, 8, 0.7, 0.002;
    /// ...plus one more per this many plies of depth.
    NullMoveDivisor: 4, 1, 16, 1.0, 0.002;
    /// No null move while the opponent's queen holds the throne with at
    /// least this many of its guards around it (6 never holds: that is a
    /// win).
    NullMoveThroneGuards: 2, 0, 6, 0.7, 0.002;
    /// While either queen holds the throne with at least this many of its
    /// guards around it, steps into the ring are neither reduced nor pruned
    /// (6: never).
    RingStepThroneGuards: 6, 0, 6, 0.7, 0.002;
    /// The reply to a guard's step next to its queen on the throne, once at
    /// least this many of her guards stand there, is searched a ply deeper
    /// (6: never; six are a win).
    RaceExtensionThroneGuards: 6, 0, 6, 0.7, 0.002;
    /// Futility pruning applies up to this depth...
    FutilityDepth: 5, 1, 12, 1.0, 0.002, needs FUTILITY_SWITCH;
    /// ...to the quiet moves of a node whose static evaluation falls short
    /// of alpha by this much per ply.
    FutilityMargin: 100, 10, 600, 10.0, 0.002, needs FUTILITY_SWITCH;
    /// Razoring applies up to this depth...
    RazorDepth: 3, 1, 8, 0.7, 0.002, needs RAZORING_SWITCH;
    /// ...to a node whose static evaluation falls short of alpha by this
    /// much per ply: a quiescence search that confirms it ends the node.
    RazorMargin: 150, 20, 1000, 20.0, 0.002, needs RAZORING_SWITCH;
    /// A node the table knows no move for is searched a ply shallower from
    /// this depth on.
    IirDepth: 4, 2, 16, 1.0, 0.002, needs IIR_SWITCH;
    /// Singular extensions apply from this depth...
    SingularDepth: 6, 4, 20, 1.0, 0.002, needs SINGULAR_SWITCH;
    /// ...when every other move falls this much per ply of depth short of
    /// the table's score for the table's move.
    SingularMargin: 2, 0, 64, 1.0, 0.002, needs SINGULAR_SWITCH;
    /// Late move reductions: the constant term, in hundredths of a ply...
    ReductionBase: 50, 0, 300, 12.0, 0.002;
    /// ...and the divisor of ln(depth) * ln(move index), in hundredths.
    ReductionDivisor: 225, 100, 600, 20.0, 0.002;
    /// Late moves of a node expected to fail high (a cut node) are reduced
    /// this many plies more.
    CutNodeReduction: 0, 0, 3, 0.5, 0.002;
    /// A killer move (a quiet move that refuted a sibling) is reduced this
    /// many plies less than other late moves.
    KillerReduction: 0, 0, 3, 0.5, 0.002;
    /// With `Search HistoryReductions`, a quiet move is reduced a ply less
    /// per this much history score (a ply more per this much below zero).
    ReductionHistory: 512, 64, 16384, 64.0, 0.002, needs HISTORY_REDUCTION_SWITCH;
    /// Late move pruning applies up to this depth...
    MovePruningDepth: 3, 1, 8, 0.7, 0.002;
    /// ...once this many moves...
    MovePruningBase: 4, 1, 20, 1.0, 0.002;
    /// ...plus this many times depth squared have been searched.
    MovePruningFactor: 3, 1, 12, 0.7, 0.002;
    /// With `Search Improving`, late move pruning starts this many percent
    /// later while the side to move improves and this many sooner while
    /// it does not.
    MovePruningImproving: 33, 0, 90, 5.0, 0.002, needs IMPROVING_SWITCH;
    /// The largest history bonus (the bonus is depth squared).
    HistoryBonusMax: 1200, 50, 8000, 100.0, 0.002;
    /// With `Search Progress`, the searching side's advantage starts to
    /// fade after this many plies without an inward step or a relocation...
    ProgressGrace: 30, 0, 2000, 5.0, 0.002, needs PROGRESS_SWITCH;
    /// ...and has faded to half this many plies later.
    ProgressPlies: 100, 4, 2000, 10.0, 0.002, needs PROGRESS_SWITCH;
    /// ...and the side that stands behind sees this many percent of the
    /// same fade of its disadvantage.
    ProgressBehindPercent: 0, 0, 100, 10.0, 0.002, needs PROGRESS_SWITCH;
    /// ...in a search whose root stands at least this many centi-guards
    /// ahead by its static evaluation (0: in every search).
    ProgressMargin: 0, 0, 5000, 20.0, 0.002, needs PROGRESS_SWITCH;
    /// The soft time budget (no new iteration after it), percent of the
    /// optimum time per move.
    TimeSoftPercent: 140, 20, 200, 6.0, 0.002;
    /// The hard time budget (stop at once), percent of the optimum.
    TimeHardPercent: 400, 100, 1000, 30.0, 0.002;
    /// The share of the increment counted into the optimum, percent.
    TimeIncrementPercent: 75, 0, 100, 6.0, 0.002;
}

// The protocol offers each parameter as a spin option, whose range is
// unsigned: a declaration out of order or below zero fails the build.
const _: () = {
    let mut index = 0;
    while index < SPECS.len() {
        let spec = &SPECS[index];
        assert!(0 <= spec.min && spec.min <= spec.default && spec.default <= spec.max);
        index += 1;
    }
};

impl Param {
    /// How many parameters there are.
    pub const COUNT: usize = SPECS.len();

    /// Its declaration.
    pub fn spec(self) -> &'static ParamSpec {
        &SPECS[self as usize]
    }
}

/// A value for every parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Indexed by [`Param`] and by [`SPECS`].
    pub values: [i32; Param::COUNT],
}

impl Default for Params {
    fn default() -> Self {
        Params {
            values: std::array::from_fn(|index| SPECS[index].default),
        }
    }
}

impl std::ops::Index<Param> for Params {
    type Output = i32;

    #[inline(always)]
    fn index(&self, param: Param) -> &i32 {
        &self.values[param as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_lies_in_its_range_and_names_are_distinct() {
        for (index, spec) in SPECS.iter().enumerate() {
            assert!(
                spec.min <= spec.default && spec.default <= spec.max,
                "{spec:?}"
            );
            assert!(spec.min >= 0, "options take whole numbers from 0: {spec:?}");
            assert!(spec.step > 0.0 && spec.rate > 0.0, "{spec:?}");
            assert!(
                SPECS[index + 1..]
                    .iter()
                    .all(|other| other.name != spec.name)
            );
        }
        assert_eq!(Param::TimeIncrementPercent.spec().default, 75);
    }

    #[test]
    fn protocol_md_documents_every_parameter_with_its_range_and_default() {
        let protocol = include_str!("../../protocol.md");
        for spec in SPECS {
            let row = format!(
                "| `{}` | {} to {}, default {} |",
                spec.option, spec.min, spec.max, spec.default
            );
            assert!(protocol.contains(&row), "protocol.md lacks {row}");
        }
    }
}
