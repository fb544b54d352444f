//! The options that `uci`/`ugi` declare and `setoption` changes: their
//! names, types, ranges, and the checks applied to new values.

use crate::rules::notation::quote;
use crate::search::eval::Term;
use crate::search::nnue::{Network, NetworkError, NetworkRef};
use crate::search::params::{
    FUTILITY_SWITCH, HISTORY_REDUCTION_SWITCH, IIR_SWITCH, IMPROVING_SWITCH, PROGRESS_SWITCH,
    RAZORING_SWITCH, SINGULAR_SWITCH, SPECS,
};
use crate::search::{EngineOptions, MAX_HASH_MIB, MAX_MULTIPV, MAX_THREADS};
use std::fmt;
use std::sync::LazyLock;

/// Everything `setoption` can change.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Settings {
    /// The options handed to the player.
    pub engine: EngineOptions,
    /// Whether the GUI means to ponder (`Ponder`); informative only.
    pub ponder: bool,
}

/// What a successful `setoption` asks the caller to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The settings changed; pass them on to the player.
    Changed,
    /// `Clear Hash` was pressed; make the player forget what it learned.
    ClearHash,
}

/// Why a `setoption` was refused (the settings are then unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OptionError {
    /// No option has this name.
    Unknown(String),
    /// A spin or check option given without `value`.
    MissingValue(&'static str),
    /// A button given a value.
    ButtonWithValue(&'static str),
    /// A spin value that is not a whole number.
    NotANumber {
        /// The option's name.
        name: &'static str,
        /// The value as written.
        value: String,
    },
    /// A spin value outside the declared range.
    OutOfRange {
        /// The option's name.
        name: &'static str,
        /// The value as written.
        value: String,
        /// The smallest accepted value.
        min: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// A network file that cannot be loaded.
    BadNetwork(NetworkError),
    /// A check value other than `true` or `false`.
    NotABoolean {
        /// The option's name.
        name: &'static str,
        /// The value as written.
        value: String,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::Unknown(name) => write!(f, "unknown option '{}'", quote(name)),
            OptionError::MissingValue(name) => {
                write!(f, "option '{name}' needs 'value <x>'")
            }
            OptionError::ButtonWithValue(name) => {
                write!(f, "option '{name}' is a button and takes no value")
            }
            OptionError::NotANumber { name, value } => write!(
                f,
                "option '{name}' needs a whole number, got '{}'",
                quote(value)
            ),
            OptionError::OutOfRange {
                name,
                value,
                min,
                max,
            } => write!(
                f,
                "option '{name}' must be between {min} and {max}, got '{}'; value unchanged",
                quote(value)
            ),
            OptionError::BadNetwork(reason) => {
                write!(f, "option 'EvalFile': {reason}; network unchanged")
            }
            OptionError::NotABoolean { name, value } => write!(
                f,
                "option '{name}' needs 'true' or 'false', got '{}'",
                quote(value)
            ),
        }
    }
}

impl std::error::Error for OptionError {}

/// Reads a spin option's value.
type SpinGet = Box<dyn Fn(&mut Settings) -> u64 + Send + Sync>;
/// Stores a spin value already checked against the option's range.
type SpinSet = Box<dyn Fn(&mut Settings, u64) + Send + Sync>;

/// How an option takes its value, and where the value lives in
/// [`Settings`].
enum Kind {
    /// A whole number within `min..=max`.
    Spin {
        min: u64,
        max: u64,
        get: SpinGet,
        set: SpinSet,
    },
    /// `true` or `false`.
    Check(fn(&mut Settings) -> &mut bool),
    /// No value: pressing it asks the caller for the effect.
    Button(Effect),
    /// Any text: the network file `EvalFile` loads.
    NetworkFile,
}

/// The `EvalFile` value naming the network built into the binary.
pub const EMBEDDED_NETWORK: &str = "<embedded>";

/// One option: its name, whether `uci`/`ugi` list it, and how it is set.
struct OptionSpec {
    name: &'static str,
    /// The developer options are not listed: they exist to measure the
    /// engine, not to play with.
    listed: bool,
    kind: Kind,
}

/// The largest contempt, in centi-guards: a guard and a half.
const MAX_CONTEMPT: u64 = 150;

/// The largest evaluation weight, in percent.
const MAX_EVAL_PERCENT: u64 = 1000;

/// Every option, in the order `uci` lists them: one row each, then one
/// developer option per evaluation term.
static OPTIONS: LazyLock<Vec<OptionSpec>> = LazyLock::new(|| {
    let mut options = vec![
        listed("Hash", spin(1, MAX_HASH_MIB, |s| &mut s.engine.hash_mib)),
        listed("Threads", spin(1, MAX_THREADS, |s| &mut s.engine.threads)),
        listed("MultiPV", spin(1, MAX_MULTIPV, |s| &mut s.engine.multipv)),
        listed(
            "Move Overhead",
            spin(0, 10_000, |s| &mut s.engine.move_overhead_ms),
        ),
        listed("Clear Hash", Kind::Button(Effect::ClearHash)),
        listed("Ponder", Kind::Check(|s| &mut s.ponder)),
        listed("EvalFile", Kind::NetworkFile),
        listed(
            "Contempt",
            spin(0, MAX_CONTEMPT, |s| &mut s.engine.tuning.contempt),
        ),
        developer(
            "Eval Network",
            Kind::Check(|s| &mut s.engine.tuning.use_network),
        ),
        developer(
            "Search TT",
            Kind::Check(|s| &mut s.engine.tuning.transposition_table),
        ),
        developer(
            "Search Killers",
            Kind::Check(|s| &mut s.engine.tuning.killers),
        ),
        developer(
            "Search History",
            Kind::Check(|s| &mut s.engine.tuning.history),
        ),
        developer(
            "Search LMR",
            Kind::Check(|s| &mut s.engine.tuning.reductions),
        ),
        developer(
            "Search LMP",
            Kind::Check(|s| &mut s.engine.tuning.move_pruning),
        ),
        developer(
            "Search Aspiration",
            Kind::Check(|s| &mut s.engine.tuning.aspiration),
        ),
        developer(
            "Search Quiescence",
            Kind::Check(|s| &mut s.engine.tuning.quiescence),
        ),
        developer(
            "Search QuiescenceTT",
            Kind::Check(|s| &mut s.engine.tuning.quiescence_table),
        ),
        developer(
            "Search QuiescenceThreats",
            Kind::Check(|s| &mut s.engine.tuning.quiescence_threats),
        ),
        developer(
            "Search NullMove",
            Kind::Check(|s| &mut s.engine.tuning.null_move),
        ),
        developer(
            "Search RFP",
            Kind::Check(|s| &mut s.engine.tuning.static_pruning),
        ),
        developer(
            FUTILITY_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.futility),
        ),
        developer(
            IIR_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.iterative_reduction),
        ),
        developer(
            HISTORY_REDUCTION_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.history_reductions),
        ),
        developer(
            SINGULAR_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.singular),
        ),
        developer(
            "Search ThreatExtension",
            Kind::Check(|s| &mut s.engine.tuning.threat_extension),
        ),
        developer(
            IMPROVING_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.improving),
        ),
        developer(
            "Search Correction",
            Kind::Check(|s| &mut s.engine.tuning.correction),
        ),
        developer(
            "Search TableEval",
            Kind::Check(|s| &mut s.engine.tuning.table_eval),
        ),
        developer(
            RAZORING_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.razoring),
        ),
        developer(
            "Search CounterMoves",
            Kind::Check(|s| &mut s.engine.tuning.counter_moves),
        ),
        developer(
            "Search ThroneSteps",
            Kind::Check(|s| &mut s.engine.tuning.throne_steps),
        ),
        developer(
            "Search ContinuationHistory",
            Kind::Check(|s| &mut s.engine.tuning.continuation_history),
        ),
        developer(
            "Search CaptureHistory",
            Kind::Check(|s| &mut s.engine.tuning.capture_history),
        ),
        developer(
            "Search StabilityTime",
            Kind::Check(|s| &mut s.engine.tuning.stability_time),
        ),
        developer(
            PROGRESS_SWITCH,
            Kind::Check(|s| &mut s.engine.tuning.progress),
        ),
    ];
    options.extend(SPECS.iter().enumerate().map(|(index, spec)| {
        developer(
            spec.option,
            // Both are at least zero (checked where they are declared).
            spin(
                u64::from(spec.min.unsigned_abs()),
                u64::from(spec.max.unsigned_abs()),
                move |s| &mut s.engine.tuning.params.values[index],
            ),
        )
    }));

    options.extend(Term::ALL.map(|term| {
        let index = term.index();
        developer(
            term.option_name(),
            spin(0, MAX_EVAL_PERCENT, move |s| {
                &mut s.engine.tuning.eval_percent[index]
            }),
        )
    }));
    options
});

fn listed(name: &'static str, kind: Kind) -> OptionSpec {
    OptionSpec {
        name,
        listed: true,
        kind,
    }
}

fn developer(name: &'static str, kind: Kind) -> OptionSpec {
    OptionSpec {
        name,
        listed: false,
        kind,
    }
}

/// A spin option within `min..=max` kept in the number `place` points to;
/// the range must fit that number's type.
fn spin<T>(
    min: u64,
    max: u64,
    place: impl Fn(&mut Settings) -> &mut T + Copy + Send + Sync + 'static,
) -> Kind
where
    T: Copy + TryFrom<u64> + TryInto<u64>,
{
    Kind::Spin {
        min,
        max,
        get: Box::new(move |settings| (*place(settings)).try_into().unwrap_or(u64::MAX)),
        set: Box::new(move |settings, value| {
            if let Ok(value) = T::try_from(value) {
                *place(settings) = value;
            }
        }),
    }
}

fn find(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|option| option.name.eq_ignore_ascii_case(name))
}

/// The `option name ...` lines of the `uci`/`ugi` reply, with the startup
/// values as defaults.
pub(crate) fn declarations() -> Vec<String> {
    let mut defaults = Settings::default();
    OPTIONS
        .iter()
        .filter(|option| option.listed)
        .map(|option| {
            let name = option.name;
            match &option.kind {
                Kind::Spin { min, max, get, .. } => format!(
                    "option name {name} type spin default {} min {min} max {max}",
                    get(&mut defaults)
                ),
                Kind::Check(flag) => format!(
                    "option name {name} type check default {}",
                    *flag(&mut defaults)
                ),
                Kind::Button(_) => format!("option name {name} type button"),
                Kind::NetworkFile => {
                    format!("option name {name} type string default {EMBEDDED_NETWORK}")
                }
            }
        })
        .collect()
}

/// Applies `setoption name <name> [value <value>]` to `settings`. Names are
/// compared case-insensitively; `value` is as the parser joined it.
///
/// # Errors
///
/// An [`OptionError`] for an unknown name or a bad value; `settings` is then
/// unchanged.
pub(crate) fn apply(
    settings: &mut Settings,
    name: &str,
    value: Option<&str>,
) -> Result<Effect, OptionError> {
    let option = find(name).ok_or_else(|| OptionError::Unknown(name.to_string()))?;
    let name = option.name;
    match (&option.kind, value) {
        (Kind::Button(effect), None) => Ok(*effect),
        (Kind::Button(_), Some(_)) => Err(OptionError::ButtonWithValue(name)),
        (Kind::Spin { .. } | Kind::Check(_) | Kind::NetworkFile, None) => {
            Err(OptionError::MissingValue(name))
        }
        (Kind::NetworkFile, Some(text)) => {
            settings.engine.tuning.network = load_network(text)?;
            Ok(Effect::Changed)
        }
        (Kind::Spin { min, max, set, .. }, Some(text)) => {
            let (min, max) = (*min, *max);
            let number: u64 = text.parse().map_err(|_| {
                if !text.is_empty()
                    && text
                        .trim_start_matches('-')
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                {
                    // A digit string that does not fit is out of range, not malformed.
                    OptionError::OutOfRange {
                        name,
                        value: text.to_string(),
                        min,
                        max,
                    }
                } else {
                    OptionError::NotANumber {
                        name,
                        value: text.to_string(),
                    }
                }
            })?;
            if !(min..=max).contains(&number) {
                return Err(OptionError::OutOfRange {
                    name,
                    value: text.to_string(),
                    min,
                    max,
                });
            }
            set(settings, number);
            Ok(Effect::Changed)
        }
        (Kind::Check(flag), Some(text)) => {
            let value = if text.eq_ignore_ascii_case("true") {
                true
            } else if text.eq_ignore_ascii_case("false") {
                false
            } else {
                return Err(OptionError::NotABoolean {
                    name,
                    value: text.to_string(),
                });
            };
            *flag(settings) = value;
            Ok(Effect::Changed)
        }
    }
}

/// The network an `EvalFile` value names. A loaded network lives as long
/// as the program, because settings are copied freely and only refer to
/// it; loading the same file again reuses the network already kept, so a
/// front end that sets the option over and over does not grow the engine.
fn load_network(value: &str) -> Result<NetworkRef, OptionError> {
    static LOADED: std::sync::Mutex<Vec<&'static Network>> = std::sync::Mutex::new(Vec::new());
    if value == EMBEDDED_NETWORK {
        return Ok(NetworkRef(Network::embedded()));
    }
    let network = Network::load(std::path::Path::new(value)).map_err(OptionError::BadNetwork)?;
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = loaded.iter().find(|&&known| *known == network) {
        return Ok(NetworkRef(known));
    }
    let kept: &'static Network = Box::leak(Box::new(network));
    loaded.push(kept);
    Ok(NetworkRef(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_match_the_contract() {
        assert_eq!(
            declarations(),
            [
                "option name Hash type spin default 64 min 1 max 65536",
                "option name Threads type spin default 1 min 1 max 256",
                "option name MultiPV type spin default 1 min 1 max 256",
                "option name Move Overhead type spin default 30 min 0 max 10000",
                "option name Clear Hash type button",
                "option name Ponder type check default false",
                "option name EvalFile type string default <embedded>",
                "option name Contempt type spin default 0 min 0 max 150",
            ]
        );
    }

    #[test]
    fn option_names_are_unique_and_every_term_has_one() {
        let mut names: Vec<String> = OPTIONS
            .iter()
            .map(|option| option.name.to_ascii_lowercase())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len());
        for term in Term::ALL {
            assert!(find(term.option_name()).is_some(), "{term:?}");
        }
    }

    #[test]
    fn every_switch_a_parameter_needs_is_a_check_option() {
        for spec in SPECS {
            for switch in spec.needs {
                let option = find(switch).unwrap_or_else(|| panic!("{spec:?}"));
                assert!(matches!(option.kind, Kind::Check(_)), "{spec:?}");
            }
        }
    }

    #[test]
    fn good_values_are_stored() {
        let mut settings = Settings::default();
        assert_eq!(
            apply(&mut settings, "hash", Some("128")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "THREADS", Some("2")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "multipv", Some("3")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "move overhead", Some("0")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "Ponder", Some("TRUE")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "clear hash", None),
            Ok(Effect::ClearHash)
        );
        let engine = settings.engine;
        assert_eq!(
            (engine.hash_mib, engine.threads, engine.multipv),
            (128, 2, 3)
        );
        assert_eq!(engine.move_overhead_ms, 0);
        assert!(settings.ponder);
    }

    #[test]
    fn bad_values_leave_settings_unchanged() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            ("Hashes", Some("1"), "unknown option 'Hashes'"),
            ("Hash", None, "option 'Hash' needs 'value <x>'"),
            (
                "Hash",
                Some("0"),
                "option 'Hash' must be between 1 and 65536, got '0'",
            ),
            ("Hash", Some("65537"), "must be between"),
            ("Hash", Some("-5"), "must be between"),
            ("Hash", Some("99999999999999999999999"), "must be between"),
            (
                "Hash",
                Some("12 MB"),
                "option 'Hash' needs a whole number, got '12 MB'",
            ),
            ("Threads", Some("x"), "needs a whole number"),
            ("MultiPV", Some("257"), "must be between 1 and 256"),
            (
                "Move Overhead",
                Some("10001"),
                "must be between 0 and 10000",
            ),
            ("Ponder", Some("yes"), "needs 'true' or 'false', got 'yes'"),
            ("Ponder", None, "needs 'value <x>'"),
            ("Clear Hash", Some("now"), "is a button and takes no value"),
        ];
        for &(name, value, expected) in cases {
            let mut settings = Settings::default();
            let error = apply(&mut settings, name, value).unwrap_err().to_string();
            assert!(error.contains(expected), "{name} {value:?}: {error}");
            assert_eq!(
                format!("{settings:?}"),
                format!("{:?}", Settings::default()),
                "{name} {value:?}"
            );
        }
    }

    #[test]
    fn developer_options_change_the_tuning_and_stay_unlisted() {
        let mut settings = Settings::default();
        assert_eq!(
            apply(&mut settings, "search lmr", Some("false")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "Search TT", Some("FALSE")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "Eval Mobility", Some("0")),
            Ok(Effect::Changed)
        );
        assert_eq!(
            apply(&mut settings, "eval tempo", Some("250")),
            Ok(Effect::Changed)
        );
        let tuning = settings.engine.tuning;
        assert!(!tuning.reductions && !tuning.transposition_table);
        assert!(tuning.killers && tuning.history && tuning.quiescence);
        assert_eq!(tuning.eval_percent[Term::Mobility.index()], 0);
        assert_eq!(tuning.eval_percent[Term::Tempo.index()], 250);
        assert!(!settings.ponder);
        let error = apply(&mut settings, "Eval Tempo", Some("1001"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("between 0 and 1000"), "{error}");
        assert_eq!(
            settings.engine.tuning.eval_percent[Term::Tempo.index()],
            250
        );
        assert!(
            declarations()
                .iter()
                .all(|line| !line.contains("Search") && !line.contains("Eval "))
        );
    }
}
