//! `agon spsa`: tunes the search's numeric parameters (the table of
//! `search::params`) by simultaneous perturbation stochastic approximation.
//! Each iteration perturbs every tuned parameter up or down at random,
//! plays game pairs between the engine set to theta + c·delta and the
//! engine set to theta − c·delta through `agon match`, and moves theta
//! along the result. The run's state is written after every iteration and
//! a stopped run resumes where it stood: an iteration cut short is played
//! again from its start, with the same perturbation and openings.

use super::atomic_file::write_atomically;
use super::match_runner;
use super::match_runner::record::GameRecord;
use super::run_lock::RunLock;
use super::stats::GameOutcome;
use crate::search::params::{ParamSpec, SPECS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The exponent of the perturbation's decay (Spall's recommended value).
const GAMMA: f64 = 0.101;
/// The exponent of the learning rate's decay.
const ALPHA: f64 = 0.602;
/// The learning rate's stability constant, as a share of the run's length.
const STABILITY_SHARE: f64 = 0.1;
/// Random plies of every opening.
const OPENING_PLIES: u32 = 6;
/// The largest rate factor: beyond it the step sizes leave the floats.
const MAX_RATE_FACTOR: f64 = 1e6;
/// How often a running match is checked for a stop signal.
const STOP_POLL: Duration = Duration::from_millis(50);

/// How a new run is set up; a resumed run keeps the settings of its state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaSettings {
    /// The engine program both sides run.
    pub engine: PathBuf,
    /// The tuned parameters' names (of `search::params`).
    pub params: Vec<String>,
    /// Iterations of the whole run (the step sizes' schedule is set by it).
    pub iterations: u64,
    /// Game pairs (each opening played with both colours) per iteration.
    pub pairs: u64,
    /// `agon match` engine keys for both sides, e.g. `tc=1+0.01` or `nodes=500`.
    pub limit: String,
    /// Games at once.
    pub concurrency: usize,
    /// Seed of the perturbations and the openings.
    pub seed: u64,
    /// Every parameter's learning rate times this: the declared rates suit
    /// runs of tens of thousands of games, a shorter run needs more to move
    /// at all. States saved before it existed read as 1.
    #[serde(default = "unit_rate")]
    pub rate_factor: f64,
}

fn unit_rate() -> f64 {
    1.0
}

/// One finished iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    /// Games won by the theta + c·delta side.
    pub plus_wins: u64,
    /// Games won by the theta − c·delta side.
    pub minus_wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Theta after the iteration.
    pub theta: Vec<f64>,
}

/// A tuning run as saved after every iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaState {
    /// The run's settings.
    pub settings: SpsaSettings,
    /// The current values of the tuned parameters, in `settings.params` order.
    pub theta: Vec<f64>,
    /// The finished iterations, oldest first.
    pub history: Vec<IterationRecord>,
}

/// Why a tuning run stopped with an error.
#[derive(Debug)]
pub enum SpsaError {
    /// A parameter name that is not in the table.
    UnknownParam(String),
    /// Settings that cannot run (no parameters, no games, no iterations).
    Settings(String),
    /// The state file could not be read, parsed or written.
    State {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// `agon match` could not run or failed.
    Match(String),
    /// Ctrl-C or SIGTERM: the iteration under way is played again on resume.
    Stopped,
}

impl fmt::Display for SpsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpsaError::UnknownParam(name) => {
                let known: Vec<&str> = SPECS.iter().map(|spec| spec.name).collect();
                write!(
                    f,
                    "unknown search parameter '{name}' (known: {})",
                    known.join(", ")
                )
            }
            SpsaError::Settings(message) => write!(f, "{message}"),
            SpsaError::State { path, message } => write!(f, "{}: {message}", path.display()),
            SpsaError::Match(message) => write!(f, "agon match: {message}"),
            SpsaError::Stopped => write!(
                f,
                "stopped by a signal; the iteration under way is played again on resume"
            ),
        }
    }
}

impl std::error::Error for SpsaError {}

impl SpsaSettings {
    /// Why these settings cannot run, if they cannot: a new run's and a
    /// saved one's alike.
    fn check(&self) -> Result<(), String> {
        if self.iterations == 0 || self.pairs == 0 || self.concurrency == 0 {
            return Err("iterations, pairs and concurrency must be at least 1".into());
        }
        if !(self.rate_factor > 0.0 && self.rate_factor <= MAX_RATE_FACTOR) {
            return Err(format!(
                "the rate factor must be above 0 and at most {MAX_RATE_FACTOR}, not {}",
                self.rate_factor
            ));
        }
        for (at, name) in self.params.iter().enumerate() {
            if self.params[..at]
                .iter()
                .any(|earlier| earlier.eq_ignore_ascii_case(name))
            {
                return Err(format!("parameter '{name}' is named twice"));
            }
        }
        Ok(())
    }

    /// The settings that differ from `other`'s, each as its field's name
    /// (the command line's argument id), this value and the other's.
    pub fn differences(&self, other: &SpsaSettings) -> Vec<(&'static str, String, String)> {
        let fields = |settings: &SpsaSettings| {
            [
                ("engine", settings.engine.display().to_string()),
                ("params", settings.params.join(",")),
                ("iterations", settings.iterations.to_string()),
                ("pairs", settings.pairs.to_string()),
                ("limit", settings.limit.clone()),
                ("concurrency", settings.concurrency.to_string()),
                ("seed", settings.seed.to_string()),
                ("rate_factor", settings.rate_factor.to_string()),
            ]
        };
        fields(self)
            .into_iter()
            .zip(fields(other))
            .filter(|((_, mine), (_, theirs))| mine != theirs)
            .map(|((flag, mine), (_, theirs))| (flag, mine, theirs))
            .collect()
    }
}

/// `agon match` engine keys of the limit, one per key: words are split at
/// spaces, and a word without `=` is the start of a key with a space in
/// its name (`option.Search Progress=true`).
fn limit_keys(limit: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut pending: Option<String> = None;
    for word in limit.split_whitespace() {
        let key = match pending.take() {
            Some(start) => format!("{start} {word}"),
            None => word.to_string(),
        };
        if key.contains('=') {
            keys.push(key);
        } else {
            pending = Some(key);
        }
    }
    keys.extend(pending);
    keys
}

fn spec_of(name: &str) -> Result<&'static ParamSpec, SpsaError> {
    SPECS
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| SpsaError::UnknownParam(name.to_string()))
}

impl SpsaState {
    /// A new run from the parameters' defaults.
    ///
    /// # Errors
    ///
    /// An unknown parameter or settings that cannot run.
    pub fn new(mut settings: SpsaSettings) -> Result<SpsaState, SpsaError> {
        if settings.params.is_empty() {
            settings.params = SPECS
                .iter()
                .filter(|spec| spec.needs.is_empty())
                .map(|spec| spec.name.to_string())
                .collect();
        }
        settings.check().map_err(SpsaError::Settings)?;
        let specs = settings
            .params
            .iter()
            .map(|name| spec_of(name))
            .collect::<Result<Vec<_>, _>>()?;
        settings.params = specs.iter().map(|spec| spec.name.to_string()).collect();
        Ok(SpsaState {
            theta: specs.iter().map(|spec| f64::from(spec.default)).collect(),
            settings,
            history: Vec::new(),
        })
    }

    /// Reads a saved run.
    ///
    /// # Errors
    ///
    /// The file cannot be read or is no state of a run of this engine's
    /// parameters.
    pub fn load(path: &Path) -> Result<SpsaState, SpsaError> {
        let error = |message: String| SpsaError::State {
            path: path.to_path_buf(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        let state: SpsaState = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
        for name in &state.settings.params {
            spec_of(name)?;
        }
        if state.theta.len() != state.settings.params.len() {
            return Err(error(
                "theta and the parameter list differ in length".into(),
            ));
        }
        state.settings.check().map_err(error)?;
        Ok(state)
    }

    fn save(&self, path: &Path) -> Result<(), SpsaError> {
        let error = |message: String| SpsaError::State {
            path: path.to_path_buf(),
            message,
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| error(e.to_string()))?;
        write_atomically(path, text.as_bytes()).map_err(|e| error(e.to_string()))
    }

    /// Refuses settings `agon match` would refuse (a bad limit), before
    /// they are saved.
    fn check_match(&self, state_file: &Path) -> Result<(), SpsaError> {
        let values = self.values();
        let args = match_args(&self.settings, 1, &values, &values, &games_file(state_file));
        match match_runner::options::parse(&args) {
            Ok(_) => Ok(()),
            Err(e) => Err(SpsaError::Settings(format!(
                "--limit {}: {e}",
                self.settings.limit
            ))),
        }
    }

    fn specs(&self) -> Vec<&'static ParamSpec> {
        self.settings
            .params
            .iter()
            .filter_map(|name| spec_of(name).ok())
            .collect()
    }

    /// Whether every iteration of the run has been played.
    pub fn finished(&self) -> bool {
        self.history.len() as u64 >= self.settings.iterations
    }

    /// The tuned values as the engine takes them (rounded, within range).
    pub fn values(&self) -> Vec<(&'static ParamSpec, i32)> {
        self.specs()
            .into_iter()
            .zip(&self.theta)
            .map(|(spec, &theta)| (spec, rounded(spec, theta)))
            .collect()
    }
}

/// `value` rounded to the nearest whole number within the parameter's range.
fn rounded(spec: &ParamSpec, value: f64) -> i32 {
    value
        .round()
        .clamp(f64::from(spec.min), f64::from(spec.max)) as i32
}

/// The perturbation `c_k` and learning rate `a_k` of iteration `k` (from
/// one) of a run of `n`, for a parameter whose values at the end of the
/// run are `step` and `rate · rate_factor`: `c_k` decays from `step · n^γ`
/// to `step`, and `a_k = a / (A + k)^α` with `a` set so that
/// `a_n / c_n² = rate · rate_factor`.
fn schedule(spec: &ParamSpec, k: u64, n: u64, rate_factor: f64) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let stability = STABILITY_SHARE * n;
    let c = spec.step * n.powf(GAMMA) / k.powf(GAMMA);
    let a_end = spec.rate * rate_factor * spec.step * spec.step;
    let a = a_end * (stability + n).powf(ALPHA) / (stability + k).powf(ALPHA);
    (c, a)
}

/// The signs of iteration `k`'s perturbation, one per tuned parameter.
fn perturbation(seed: u64, k: u64, count: usize) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..count)
        .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
        .collect()
}

/// The `agon match` engine arguments of one side.
fn engine_args(settings: &SpsaSettings, name: &str, values: &[(&ParamSpec, i32)]) -> Vec<String> {
    let mut args = vec![
        "-engine".to_string(),
        format!("cmd={}", settings.engine.display()),
        format!("name={name}"),
    ];
    let mut switches: Vec<&str> = values
        .iter()
        .flat_map(|(spec, _)| spec.needs.iter().copied())
        .collect();
    switches.sort_unstable();
    switches.dedup();
    args.extend(
        switches
            .iter()
            .map(|switch| format!("option.{switch}=true")),
    );
    args.extend(
        values
            .iter()
            .map(|(spec, value)| format!("option.{}={value}", spec.option)),
    );
    args
}

/// Has the kernel send SIGTERM to the match when the tuner ends, even by
/// SIGKILL, which no handler sees: the match then stops as on any SIGTERM,
/// and the iteration is played again on resume.
#[cfg(target_os = "linux")]
fn end_with_this_process(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid cannot fail and touches no memory of ours.
    let tuner = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec, makes only
    // async-signal-safe calls (prctl, getppid) and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The tuner may have ended before the request was made.
            if libc::getppid() != tuner {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
}

/// Elsewhere the match outlives a tuner killed outright.
#[cfg(not(target_os = "linux"))]
fn end_with_this_process(_command: &mut Command) {}

/// Plays iteration `k`'s games; returns the plus side's wins, its losses
/// and the draws.
fn play(
    state: &SpsaState,
    k: u64,
    plus: &[(&ParamSpec, i32)],
    minus: &[(&ParamSpec, i32)],
    games_file: &Path,
    stop: &AtomicBool,
) -> Result<(u64, u64, u64), SpsaError> {
    // A file left by an iteration cut short holds games about to be replayed.
    match std::fs::remove_file(games_file) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(SpsaError::Match(format!(
                "{}: {error}",
                games_file.display()
            )));
        }
    }
    let args = match_args(&state.settings, k, plus, minus, games_file);
    let program = std::env::current_exe().map_err(|e| SpsaError::Match(e.to_string()))?;
    log::debug!("{} {}", program.display(), args.join(" "));
    let mut command = Command::new(&program);
    end_with_this_process(&mut command);
    let mut child = command
        .arg("match")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SpsaError::Match(format!("cannot run {}: {e}", program.display())))?;
    // Read on its own thread, so that a full pipe never stalls the match.
    let errors = child.stderr.take().map(|mut stderr| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        })
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if stop.load(Ordering::SeqCst) => {
                // Its games are replayed on resume: the match goes with the tuner.
                let _ = child.kill();
                let _ = child.wait();
                return Err(SpsaError::Stopped);
            }
            Ok(None) => std::thread::sleep(STOP_POLL),
            Err(e) => return Err(SpsaError::Match(e.to_string())),
        }
    };
    if !status.success() {
        let stderr = errors
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default();
        return Err(SpsaError::Match(format!("{status}: {}", stderr.trim())));
    }
    let text = std::fs::read_to_string(games_file)
        .map_err(|e| SpsaError::Match(format!("{}: {e}", games_file.display())))?;
    let (mut wins, mut losses, mut draws) = (0, 0, 0);
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let record: GameRecord = serde_json::from_str(line)
            .map_err(|e| SpsaError::Match(format!("{}: {e}", games_file.display())))?;
        let color = if record.white == "plus" {
            crate::rules::Color::White
        } else {
            crate::rules::Color::Black
        };
        match record.result.outcome_for(color) {
            GameOutcome::Win => wins += 1,
            GameOutcome::Loss => losses += 1,
            GameOutcome::Draw => draws += 1,
        }
    }
    let expected = state.settings.pairs.saturating_mul(2);
    if wins + losses + draws != expected {
        return Err(SpsaError::Match(format!(
            "{} holds {} games, not the {expected} of the iteration",
            games_file.display(),
            wins + losses + draws
        )));
    }
    let _ = std::fs::remove_file(games_file);
    Ok((wins, losses, draws))
}

/// The arguments of `agon match` for iteration `k`'s games.
fn match_args(
    settings: &SpsaSettings,
    k: u64,
    plus: &[(&ParamSpec, i32)],
    minus: &[(&ParamSpec, i32)],
    games_file: &Path,
) -> Vec<String> {
    let mut args = Vec::new();
    args.extend(engine_args(settings, "plus", plus));
    args.extend(engine_args(settings, "minus", minus));
    args.push("-each".into());
    args.extend(limit_keys(&settings.limit));
    let opening_seed = settings.seed.wrapping_mul(1_000_003).wrapping_add(k);
    args.extend([
        "-games".to_string(),
        "2".into(),
        "-rounds".into(),
        settings.pairs.to_string(),
        "-repeat".into(),
        "-openings".into(),
        "random".into(),
        format!("plies={OPENING_PLIES}"),
        format!("seed={opening_seed}"),
        "-concurrency".into(),
        settings.concurrency.to_string(),
        "-jsonl".into(),
        games_file.display().to_string(),
    ]);
    args
}

/// The file that holds the games of the iteration under way.
fn games_file(state_file: &Path) -> PathBuf {
    let mut name = state_file.as_os_str().to_owned();
    name.push(".games.jsonl");
    PathBuf::from(name)
}

/// Plays the next iteration of `state` and moves theta.
///
/// # Errors
///
/// The match could not be played.
pub fn step(state: &mut SpsaState, state_file: &Path, stop: &AtomicBool) -> Result<(), SpsaError> {
    let k = state.history.len() as u64 + 1;
    let n = state.settings.iterations;
    let specs = state.specs();
    let signs = perturbation(state.settings.seed, k, specs.len());
    let side = |direction: f64| -> Vec<(&'static ParamSpec, i32)> {
        specs
            .iter()
            .zip(&state.theta)
            .zip(&signs)
            .map(|((spec, &theta), &sign)| {
                let (c, _) = schedule(spec, k, n, state.settings.rate_factor);
                (*spec, rounded(spec, theta + direction * c * sign))
            })
            .collect()
    };
    let (plus, minus) = (side(1.0), side(-1.0));
    let (plus_wins, minus_wins, draws) =
        play(state, k, &plus, &minus, &games_file(state_file), stop)?;
    let result = plus_wins as f64 - minus_wins as f64;
    for ((theta, spec), sign) in state.theta.iter_mut().zip(&specs).zip(&signs) {
        let (c, a) = schedule(spec, k, n, state.settings.rate_factor);
        let moved = *theta + a * result / (c * sign);
        if !moved.is_finite() {
            return Err(SpsaError::Settings(format!(
                "{} would leave the numbers ({moved}): lower the rate factor",
                spec.name
            )));
        }
        *theta = moved.clamp(f64::from(spec.min), f64::from(spec.max));
    }
    state.history.push(IterationRecord {
        plus_wins,
        minus_wins,
        draws,
        theta: state.theta.clone(),
    });
    Ok(())
}

/// The theta line printed after every iteration and at the end.
fn describe(state: &SpsaState) -> String {
    state
        .specs()
        .iter()
        .zip(&state.theta)
        .map(|(spec, theta)| format!("{}={theta:.2}", spec.name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs (or continues, when `state_file` exists) a tuning run; stops after
/// `max_iterations` more iterations if given, the state saved for a later
/// resume. `given` names the settings the command line set (by field);
/// on a resume each must equal the run's own, but for `concurrency`.
/// Prints a line per iteration and, at the end, the engine options of the
/// result.
///
/// # Errors
///
/// A bad state or settings, or a match that failed.
pub fn run(
    state_file: &Path,
    settings: SpsaSettings,
    given: &[&str],
    max_iterations: Option<u64>,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let _lock = RunLock::take(state_file).map_err(|e| SpsaError::State {
        path: state_file.to_path_buf(),
        message: e.to_string(),
    })?;
    let asked = SpsaState::new(settings)?;
    let mut state = if state_file.exists() {
        let mut state = SpsaState::load(state_file)?;
        // Another setting would make another run under this state's
        // history; only the games at once may change.
        let changed: Vec<String> = state
            .settings
            .differences(&asked.settings)
            .into_iter()
            .filter(|(field, _, _)| given.contains(field) && *field != "concurrency")
            .map(|(field, saved, asked)| {
                let flag = field.replace('_', "-");
                format!("--{flag} {asked} (the run has {saved})")
            })
            .collect();
        if !changed.is_empty() {
            return Err(Box::new(SpsaError::Settings(format!(
                "{} is the state of another run: {}",
                state_file.display(),
                changed.join(", ")
            ))));
        }
        if given.contains(&"concurrency") {
            state.settings.concurrency = asked.settings.concurrency;
        }
        log::info!(
            "resuming {} after iteration {} of {}",
            state_file.display(),
            state.history.len(),
            state.settings.iterations
        );
        state
    } else {
        asked.check_match(state_file)?;
        asked.save(state_file)?;
        asked
    };
    let mut played = 0;
    while !state.finished() && max_iterations.is_none_or(|max| played < max) {
        step(&mut state, state_file, stop)?;
        state.save(state_file)?;
        played += 1;
        let last = state.history.last().map_or((0, 0, 0), |record| {
            (record.plus_wins, record.minus_wins, record.draws)
        });
        writeln!(
            out,
            "iteration {}/{}: plus {}-{}-{} minus; {}",
            state.history.len(),
            state.settings.iterations,
            last.0,
            last.1,
            last.2,
            describe(&state)
        )?;
        out.flush()?;
    }
    let options: Vec<String> = state
        .values()
        .iter()
        .map(|(spec, value)| format!("\"option.{}={value}\"", spec.option))
        .collect();
    writeln!(
        out,
        "{} after {} of {} iterations: {}",
        if state.finished() {
            "finished"
        } else {
            "stopped"
        },
        state.history.len(),
        state.settings.iterations,
        options.join(" ")
    )?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_ends_at_the_declared_step_and_rate() {
        let spec = SPECS[0];
        let (c_first, a_first) = schedule(&spec, 1, 100, 1.0);
        let (c_last, a_last) = schedule(&spec, 100, 100, 1.0);
        assert!((c_last - spec.step).abs() < 1e-9);
        assert!((a_last / (c_last * c_last) - spec.rate).abs() < 1e-12);
        assert!(c_first > c_last && a_first > a_last);
        let (c_scaled, a_scaled) = schedule(&spec, 100, 100, 8.0);
        assert!((c_scaled - c_last).abs() < 1e-12);
        assert!((a_scaled / a_last - 8.0).abs() < 1e-9);
    }

    #[test]
    fn limit_keys_may_hold_spaces_in_their_names() {
        assert_eq!(
            limit_keys("nodes=500  option.Search Progress=true option.Hash=16"),
            ["nodes=500", "option.Search Progress=true", "option.Hash=16"]
        );
        assert_eq!(limit_keys("tc=1+0.01 stray"), ["tc=1+0.01", "stray"]);
    }

    #[test]
    fn perturbations_are_signs_and_repeat_for_the_same_iteration() {
        let first = perturbation(7, 3, 40);
        assert_eq!(first, perturbation(7, 3, 40));
        assert!(first.iter().all(|sign| sign.abs() == 1.0));
        assert!(first.contains(&1.0) && first.contains(&-1.0));
        assert_ne!(first, perturbation(7, 4, 40));
    }

    /// Settings of a short run tuning `param` at tiny node limits.
    fn settings_tuning(param: &str) -> SpsaSettings {
        SpsaSettings {
            engine: PathBuf::from("agon"),
            params: vec![param.into()],
            iterations: 10,
            pairs: 1,
            limit: "nodes=100".into(),
            concurrency: 1,
            seed: 1,
            rate_factor: 1.0,
        }
    }

    #[test]
    fn parameters_of_a_switched_off_part_are_tuned_only_when_named_and_then_switched_on() {
        let all = SpsaState::new(SpsaSettings {
            params: Vec::new(),
            ..settings_tuning("")
        })
        .expect("the default run");
        assert!(
            all.settings
                .params
                .iter()
                .any(|name| name == "AspirationDelta")
        );
        assert!(
            !all.settings
                .params
                .iter()
                .any(|name| name == "ProgressGrace")
        );
        let named = SpsaState::new(settings_tuning("ProgressGrace")).expect("a named run");
        let args = engine_args(&named.settings, "plus", &named.values());
        assert_eq!(
            args[3..],
            [
                "option.Search Progress=true".to_string(),
                "option.Search ProgressGrace=30".to_string()
            ]
        );
        let plain = engine_args(&all.settings, "plus", &all.values());
        assert!(!plain.iter().any(|arg| arg.contains("Search Progress=")));
    }

    #[test]
    fn unknown_parameters_and_empty_runs_are_refused() {
        let settings = settings_tuning("NoSuchThing");
        assert!(matches!(
            SpsaState::new(settings.clone()),
            Err(SpsaError::UnknownParam(_))
        ));
        let none = SpsaSettings {
            params: Vec::new(),
            pairs: 0,
            ..settings.clone()
        };
        assert!(matches!(SpsaState::new(none), Err(SpsaError::Settings(_))));
        for rate_factor in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let bad_rate = SpsaSettings {
                params: Vec::new(),
                rate_factor,
                ..settings.clone()
            };
            assert!(matches!(
                SpsaState::new(bad_rate),
                Err(SpsaError::Settings(_))
            ));
        }
    }

    #[test]
    fn a_saved_state_with_settings_that_cannot_run_is_refused() {
        let settings = settings_tuning("AspirationDelta");
        let dir = crate::tools::scratch_dir("spsa-check");
        let path = dir.path().join("spsa.json");
        let good = SpsaState::new(settings).expect("settings that run");
        good.save(&path).expect("saved");
        assert_eq!(SpsaState::load(&path).expect("loads"), good);
        for (key, value) in [("rate_factor", "-1.0"), ("pairs", "0")] {
            let mut edited: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            edited["settings"][key] = serde_json::from_str(value).unwrap();
            let edited_path = path.with_extension(format!("{key}.json"));
            std::fs::write(&edited_path, edited.to_string()).unwrap();
            let refused = SpsaState::load(&edited_path);
            assert!(
                matches!(&refused, Err(SpsaError::State { .. })),
                "{key}: {refused:?}"
            );
        }
    }
}
