//! The options that `uci`/`ugi` declare and `setoption` changes: their
//! names, types, ranges, and the checks applied to new values.

use super::command::quote;
use crate::search::eval::Term;
use crate::search::{EngineOptions, Tuning};
use std::fmt;

/// Everything `setoption` can change.
#[derive(Clone, Copy, Debug, Default)]
pub struct Settings {
    /// The options handed to the player.
    pub engine: EngineOptions,
    /// Whether the GUI means to ponder (`Ponder`); informative only.
    pub ponder: bool,
}

/// What a successful `setoption` asks the caller to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The settings changed; pass them on to the player.
    Changed,
    /// `Clear Hash` was pressed; make the player forget what it learned.
    ClearHash,
}

/// Why a `setoption` was refused (the settings are then unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
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
            OptionError::NotABoolean { name, value } => write!(
                f,
                "option '{name}' needs 'true' or 'false', got '{}'",
                quote(value)
            ),
        }
    }
}

impl std::error::Error for OptionError {}

/// The options: those `uci` lists, and the developer options it does not
/// list (they exist to measure the engine, not to play with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Declared {
    Hash,
    Threads,
    MultiPv,
    MoveOverhead,
    ClearHash,
    Ponder,
    /// A part of the search, by index into [`SWITCHES`].
    Switch(usize),
    /// An evaluation term's weight in percent.
    EvalWeight(Term),
}

/// The developer switches: name and the flag it sets.
type Switch = (&'static str, fn(&mut Tuning) -> &mut bool);

const SWITCHES: [Switch; 7] = [
    ("Search TT", |tuning| &mut tuning.transposition_table),
    ("Search Killers", |tuning| &mut tuning.killers),
    ("Search History", |tuning| &mut tuning.history),
    ("Search LMR", |tuning| &mut tuning.reductions),
    ("Search LMP", |tuning| &mut tuning.move_pruning),
    ("Search Aspiration", |tuning| &mut tuning.aspiration),
    ("Search Quiescence", |tuning| &mut tuning.quiescence),
];

/// The largest evaluation weight, in percent.
const MAX_EVAL_PERCENT: u64 = 1000;

/// The type of an option, as declared to the GUI.
enum Type {
    Spin { min: u64, max: u64 },
    Check,
    Button,
}

const DECLARED: [Declared; 6] = [
    Declared::Hash,
    Declared::Threads,
    Declared::MultiPv,
    Declared::MoveOverhead,
    Declared::ClearHash,
    Declared::Ponder,
];

impl Declared {
    fn name(self) -> &'static str {
        match self {
            Declared::Hash => "Hash",
            Declared::Threads => "Threads",
            Declared::MultiPv => "MultiPV",
            Declared::MoveOverhead => "Move Overhead",
            Declared::ClearHash => "Clear Hash",
            Declared::Ponder => "Ponder",
            Declared::Switch(index) => SWITCHES[index].0,
            Declared::EvalWeight(term) => term.option_name(),
        }
    }

    fn kind(self) -> Type {
        match self {
            Declared::Hash => Type::Spin {
                min: 1,
                max: 65_536,
            },
            Declared::Threads | Declared::MultiPv => Type::Spin { min: 1, max: 256 },
            Declared::MoveOverhead => Type::Spin {
                min: 0,
                max: 10_000,
            },
            Declared::EvalWeight(_) => Type::Spin {
                min: 0,
                max: MAX_EVAL_PERCENT,
            },
            Declared::ClearHash => Type::Button,
            Declared::Ponder | Declared::Switch(_) => Type::Check,
        }
    }

    /// The current value of a spin option (0 for the others, never shown).
    fn spin(self, settings: &Settings) -> u64 {
        let engine = &settings.engine;
        let value = match self {
            Declared::Hash => engine.hash_mib,
            Declared::Threads => engine.threads,
            Declared::MultiPv => engine.multipv,
            Declared::MoveOverhead => return engine.move_overhead_ms,
            Declared::EvalWeight(term) => {
                return u64::try_from(engine.tuning.eval_percent[term.index()]).unwrap_or(0);
            }
            Declared::ClearHash | Declared::Ponder | Declared::Switch(_) => 0,
        };
        u64::try_from(value).unwrap_or(u64::MAX)
    }

    /// Stores a spin value already checked against the option's range.
    fn set_spin(self, settings: &mut Settings, value: u64) {
        let engine = &mut settings.engine;
        // Every range fits in a usize on the platforms Rust supports.
        let size = usize::try_from(value).unwrap_or(usize::MAX);
        match self {
            Declared::Hash => engine.hash_mib = size,
            Declared::Threads => engine.threads = size,
            Declared::MultiPv => engine.multipv = size,
            Declared::MoveOverhead => engine.move_overhead_ms = value,
            Declared::EvalWeight(term) => {
                engine.tuning.eval_percent[term.index()] = i32::try_from(value).unwrap_or(i32::MAX);
            }
            Declared::ClearHash | Declared::Ponder | Declared::Switch(_) => {}
        }
    }

    /// The flag a check option sets (none for the other types).
    fn check(self, settings: &mut Settings) -> Option<&mut bool> {
        match self {
            Declared::Ponder => Some(&mut settings.ponder),
            Declared::Switch(index) => Some(SWITCHES[index].1(&mut settings.engine.tuning)),
            _ => None,
        }
    }

    fn find(name: &str) -> Option<Declared> {
        let developer = (0..SWITCHES.len())
            .map(Declared::Switch)
            .chain(Term::ALL.into_iter().map(Declared::EvalWeight));
        DECLARED
            .into_iter()
            .chain(developer)
            .find(|option| option.name().eq_ignore_ascii_case(name))
    }
}

/// The `option name ...` lines of the `uci`/`ugi` reply, with the startup
/// values as defaults.
pub fn declarations() -> Vec<String> {
    let mut defaults = Settings::default();
    DECLARED
        .into_iter()
        .map(|option| {
            let name = option.name();
            match option.kind() {
                Type::Spin { min, max } => format!(
                    "option name {name} type spin default {} min {min} max {max}",
                    option.spin(&defaults)
                ),
                Type::Check => {
                    let default = option.check(&mut defaults).is_some_and(|flag| *flag);
                    format!("option name {name} type check default {default}")
                }
                Type::Button => format!("option name {name} type button"),
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
pub fn apply(
    settings: &mut Settings,
    name: &str,
    value: Option<&str>,
) -> Result<Effect, OptionError> {
    let option = Declared::find(name).ok_or_else(|| OptionError::Unknown(name.to_string()))?;
    let name = option.name();
    match (option.kind(), value) {
        (Type::Button, None) => Ok(Effect::ClearHash),
        (Type::Button, Some(_)) => Err(OptionError::ButtonWithValue(name)),
        (Type::Spin { .. } | Type::Check, None) => Err(OptionError::MissingValue(name)),
        (Type::Spin { min, max }, Some(text)) => {
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
            option.set_spin(settings, number);
            Ok(Effect::Changed)
        }
        (Type::Check, Some(text)) => {
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
            if let Some(flag) = option.check(settings) {
                *flag = value;
            }
            Ok(Effect::Changed)
        }
    }
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
            ]
        );
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
                .all(|line| !line.contains("Search") && !line.contains("Eval"))
        );
    }
}
