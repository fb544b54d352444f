//! Evaluation tuning from recorded games: the weight of each evaluation
//! term (in percent, as the `Eval <term>` options take it) fitted by
//! logistic regression over the quiet positions of `agon match` JSON
//! records, to the games' results (the "Texel" method), to the scores the
//! engines' searches reported, or to a blend of both.

use super::match_runner::record::{GameRecord, ScoreRecord};
use crate::rules::{Color, Game, MoveError, parse_fen};
use crate::search::eval::{Term, is_quiet, term_differences};
use std::fmt;
use std::io::{self, BufRead};
use std::path::PathBuf;

/// Plies after the opening book skipped in each game: the first engine
/// moves of a game carry little information about its result.
const SKIP_PLIES: usize = 8;
/// Gradient steps of the weight fit.
const FIT_STEPS: usize = 3000;
/// The smallest logistic scale tried: an evaluation of 10,000 centi-guards
/// would still predict only about 52%.
const MIN_SCALE: f64 = 1e-5;
/// The largest weight the options accept, in percent.
const MAX_PERCENT: f64 = 1000.0;

/// Why records could not be read into samples.
#[derive(Debug)]
pub enum RecordError {
    /// Reading a line failed.
    Read {
        /// The line, counted from 1.
        line: usize,
        /// What the reader said.
        source: io::Error,
    },
    /// A record holds a move that is not legal where it was played.
    IllegalMove {
        /// The line, counted from 1.
        line: usize,
        /// Whether the move is one of the opening book's.
        book: bool,
        /// The move as recorded.
        text: String,
        /// Why it is not legal.
        source: MoveError,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Read { line, source } => write!(f, "cannot read line {line}: {source}"),
            RecordError::IllegalMove {
                line,
                book,
                text,
                source,
            } => {
                let which = if *book { "book move" } else { "move" };
                write!(f, "line {line}: {which} {text}: {source}")
            }
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Read { source, .. } => Some(source),
            RecordError::IllegalMove { source, .. } => Some(source),
        }
    }
}

/// Why `agon tune` fitted no weights.
#[derive(Debug)]
pub enum TuneError {
    /// The result weight is outside 0 to 1.
    ResultWeight(f64),
    /// A records file cannot be opened (missing, unreadable).
    Open {
        /// The file.
        path: PathBuf,
        /// Why it cannot be opened.
        source: io::Error,
    },
    /// A records file holds something that cannot be replayed.
    Records {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        source: RecordError,
    },
    /// The records hold no quiet position to fit to.
    NoQuietPosition,
    /// The evaluation predicts nothing of the targets (the logistic scale
    /// fell to its minimum).
    NoPrediction {
        /// The games read.
        games: usize,
        /// The result weight asked for.
        result_weight: f64,
    },
    /// Writing the report failed.
    Output(io::Error),
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::ResultWeight(weight) => {
                write!(f, "the result weight must be between 0 and 1, got {weight}")
            }
            TuneError::Open { path, source } => {
                write!(f, "cannot open {}: {source}", path.display())
            }
            TuneError::Records { path, source } => write!(f, "{}: {source}", path.display()),
            TuneError::NoQuietPosition => write!(f, "no quiet position found in the records"),
            TuneError::NoPrediction {
                games,
                result_weight,
            } => write!(
                f,
                "the evaluation does not predict the targets of these {games} games \
                 (too few decisive games for a result weight of {result_weight}?); \
                 no weights fitted"
            ),
            TuneError::Output(source) => write!(f, "cannot write the report: {source}"),
        }
    }
}

impl std::error::Error for TuneError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TuneError::Open { source, .. } | TuneError::Output(source) => Some(source),
            TuneError::Records { source, .. } => Some(source),
            TuneError::ResultWeight(_)
            | TuneError::NoQuietPosition
            | TuneError::NoPrediction { .. } => None,
        }
    }
}

/// Converts a reported search score (centi-guards) into an expected score
/// for a target: a guard ahead is worth about 60%.
const SEARCH_SCALE: f64 = 1.0 / 250.0;

/// One quiet position: its term differences (side to move minus the other)
/// and the expected score to fit for the side to move, between 0 and 1.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sample {
    differences: [f64; Term::COUNT],
    target: f64,
}

/// What [`load_samples`] read.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    /// The quiet positions found.
    pub samples: Vec<Sample>,
    /// Games with a decisive or drawn result that were used.
    pub games: usize,
    /// Lines that were not a usable game (unfinished or unreadable).
    pub skipped: usize,
}

/// Reads JSON game records, one per line, and keeps the quiet positions
/// the engines faced (after the book and [`SKIP_PLIES`] more). Each target
/// blends the game's result (weight `result_weight`) with the score the
/// mover's search reported (the rest); with a weight below 1, positions
/// without a reported centi-guard score are left out.
///
/// # Errors
///
/// Reading the input failed, or a record holds a move that is not legal.
pub(crate) fn load_samples(
    input: impl BufRead,
    result_weight: f64,
) -> Result<Samples, RecordError> {
    let mut loaded = Samples::default();
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|source| RecordError::Read {
            line: number,
            source,
        })?;
        let illegal = |book: bool, text: &str, source| RecordError::IllegalMove {
            line: number,
            book,
            text: text.to_string(),
            source,
        };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(record) = serde_json::from_str::<GameRecord>(&line) else {
            loaded.skipped += 1;
            continue;
        };
        let white_result = record.result.outcome_for(Color::White).points();
        let Ok(start) = parse_fen(&record.fen) else {
            loaded.skipped += 1;
            continue;
        };
        let mut game = Game::new(start);
        for mv in &record.book {
            game.play_text(mv)
                .map_err(|source| illegal(true, mv, source))?;
        }
        for (ply, mv) in record.moves.iter().enumerate() {
            let position = *game.position();
            let result = if position.side_to_move() == Color::White {
                white_result
            } else {
                1.0 - white_result
            };
            let searched = match mv.score {
                Some(ScoreRecord::Cp(cp)) => {
                    Some(1.0 / (1.0 + (-SEARCH_SCALE * f64::from(cp)).exp()))
                }
                _ if result_weight >= 1.0 => Some(0.0),
                _ => None,
            };
            if let Some(searched) = searched
                && ply >= SKIP_PLIES
                && is_quiet(&position)
            {
                loaded.samples.push(Sample {
                    differences: term_differences(&position).map(f64::from),
                    target: result_weight * result + (1.0 - result_weight) * searched,
                });
            }
            game.play_text(&mv.text)
                .map_err(|source| illegal(false, &mv.text, source))?;
        }
        loaded.games += 1;
    }
    Ok(loaded)
}

/// The result of a fit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fit {
    /// Logistic scale: an evaluation `e` predicts the score
    /// `1 / (1 + exp(-scale * e))`.
    pub scale: f64,
    /// Mean squared error of the predictions with the starting weights.
    pub loss_before: f64,
    /// The same with the fitted weights.
    pub loss_after: f64,
    /// The fitted weights, in percent.
    pub percent: [f64; Term::COUNT],
}

fn predicted(sample: &Sample, percent: &[f64; Term::COUNT], scale: f64) -> f64 {
    let eval: f64 = (0..Term::COUNT)
        .map(|term| sample.differences[term] * percent[term] / 100.0)
        .sum();
    1.0 / (1.0 + (-scale * eval).exp())
}

fn loss(samples: &[Sample], percent: &[f64; Term::COUNT], scale: f64) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|sample| (sample.target - predicted(sample, percent, scale)).powi(2))
        .sum();
    total / samples.len().max(1) as f64
}

/// The logistic scale that best fits `percent`: a golden-section search
/// over the logarithm of the scale.
fn fit_scale(samples: &[Sample], percent: &[f64; Term::COUNT]) -> f64 {
    let at = |log_scale: f64| loss(samples, percent, log_scale.exp());
    let (mut low, mut high) = (MIN_SCALE.ln(), (1.0f64).ln());
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let left = high - ratio * (high - low);
        let right = low + ratio * (high - low);
        if at(left) < at(right) {
            high = right;
        } else {
            low = left;
        }
    }
    ((low + high) / 2.0).exp()
}

/// Fits the term weights to `samples`, starting from `start` (percent):
/// the logistic scale is fitted to the starting weights and then held, and
/// the weights follow the gradient of the squared error (Adam steps),
/// staying within the range the options accept.
pub(crate) fn fit(samples: &[Sample], start: &[f64; Term::COUNT]) -> Fit {
    let scale = fit_scale(samples, start);
    let loss_before = loss(samples, start, scale);
    let mut percent = *start;
    let (mut first, mut second) = ([0.0; Term::COUNT], [0.0; Term::COUNT]);
    let (rate, beta1, beta2) = (1.0, 0.9, 0.999);
    let count = samples.len().max(1) as f64;
    for step in 1..=FIT_STEPS {
        let mut gradient = [0.0; Term::COUNT];
        for sample in samples {
            let p = predicted(sample, &percent, scale);
            let common = -2.0 * (sample.target - p) * p * (1.0 - p) * scale / 100.0;
            for (term, slot) in gradient.iter_mut().enumerate() {
                *slot += common * sample.differences[term];
            }
        }
        for term in 0..Term::COUNT {
            let g = gradient[term] / count;
            first[term] = beta1 * first[term] + (1.0 - beta1) * g;
            second[term] = beta2 * second[term] + (1.0 - beta2) * g * g;
            let first_hat = first[term] / (1.0 - beta1.powi(step as i32));
            let second_hat = second[term] / (1.0 - beta2.powi(step as i32));
            percent[term] = (percent[term] - rate * first_hat / (second_hat.sqrt() + 1e-12))
                .clamp(0.0, MAX_PERCENT);
        }
    }
    Fit {
        scale,
        loss_before,
        loss_after: loss(samples, &percent, scale),
        percent,
    }
}

/// Reads the records in `files`, fits the weights and writes a report
/// ending with the `setoption` lines that apply the fitted weights.
///
/// # Errors
///
/// A [`TuneError`]: a bad result weight, a file that cannot be opened or
/// replayed, no position to fit, a fit without signal, or a failed write.
pub fn run(
    files: &[PathBuf],
    result_weight: f64,
    out: &mut impl io::Write,
) -> Result<(), TuneError> {
    if !(0.0..=1.0).contains(&result_weight) {
        return Err(TuneError::ResultWeight(result_weight));
    }
    let mut loaded = Samples::default();
    for path in files {
        let file = std::fs::File::open(path).map_err(|source| TuneError::Open {
            path: path.clone(),
            source,
        })?;
        let part = load_samples(io::BufReader::new(file), result_weight).map_err(|source| {
            TuneError::Records {
                path: path.clone(),
                source,
            }
        })?;
        loaded.samples.extend(part.samples);
        loaded.games += part.games;
        loaded.skipped += part.skipped;
    }
    if loaded.samples.is_empty() {
        return Err(TuneError::NoQuietPosition);
    }
    let fit = fit(&loaded.samples, &[100.0; Term::COUNT]);
    if fit.scale < MIN_SCALE * 1.01 {
        return Err(TuneError::NoPrediction {
            games: loaded.games,
            result_weight,
        });
    }
    let write = |out: &mut dyn io::Write| -> io::Result<()> {
        writeln!(
            out,
            "games {} (lines skipped {}), quiet positions {}",
            loaded.games,
            loaded.skipped,
            loaded.samples.len()
        )?;
        writeln!(out, "logistic scale {:.6} per centi-guard", fit.scale)?;
        writeln!(
            out,
            "mean squared error {:.6} -> {:.6}",
            fit.loss_before, fit.loss_after
        )?;
        for (term, percent) in Term::ALL.iter().zip(fit.percent) {
            writeln!(
                out,
                "setoption name {} value {}",
                term.option_name(),
                percent.round()
            )?;
        }
        Ok(())
    };
    write(out).map_err(TuneError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(differences: [f64; Term::COUNT], target: f64) -> Sample {
        Sample {
            differences,
            target,
        }
    }

    #[test]
    fn a_term_that_predicts_the_result_gains_weight_and_noise_loses_it() {
        // Material decides every game; mobility points the wrong way as
        // often as the right one.
        let mut samples = Vec::new();
        for index in 0..400 {
            let sign = if index % 2 == 0 { 1.0 } else { -1.0 };
            let noise = if index % 4 < 2 { 50.0 } else { -50.0 };
            let mut differences = [0.0; Term::COUNT];
            differences[Term::Material.index()] = 20.0 * sign;
            differences[Term::Mobility.index()] = noise;
            samples.push(sample(differences, if sign > 0.0 { 1.0 } else { 0.0 }));
        }
        let fit = fit(&samples, &[100.0; Term::COUNT]);
        assert!(fit.loss_after < fit.loss_before, "{fit:?}");
        assert!(fit.percent[Term::Material.index()] > 100.0, "{fit:?}");
        assert!(fit.percent[Term::Mobility.index()] < 100.0, "{fit:?}");
    }

    #[test]
    fn records_are_replayed_into_quiet_positions() {
        // Black won a game of 16 plies (first legal move each time).
        let mut game = Game::new(parse_fen(crate::rules::START_FEN).unwrap());
        let mut moves = Vec::new();
        let mut expected = Vec::new();
        let mut expected_plies = Vec::new();
        for ply in 0..16 {
            let position = *game.position();
            if ply >= SKIP_PLIES && is_quiet(&position) {
                let black = position.side_to_move() == Color::Black;
                expected.push(if black { 1.0 } else { 0.0 });
                expected_plies.push(ply);
            }
            let mv = crate::rules::legal_moves(&position).as_slice()[0];
            let score = if ply % 2 == 0 {
                "null"
            } else {
                r#"{"cp":100}"#
            };
            moves.push(format!(
                r#"{{"move":"{mv}","score":{score},"depth":null,"time_ms":1}}"#
            ));
            game.play(mv);
        }
        assert!(!expected.is_empty());
        let record = format!(
            r#"{{"game":1,"round":1,"white":"a","black":"b","result":"0-1","termination":"repetition","reason":"x","fen":"{}","book":[],"moves":[{}],"white_time_control":"-","black_time_control":"-","final_fen":"-","date":"2026.11.30"}}"#,
            crate::rules::START_FEN,
            moves.join(",")
        );
        let text = format!("{record}\nnot json\n\n");
        let loaded = load_samples(text.as_bytes(), 1.0).unwrap();
        assert_eq!((loaded.games, loaded.skipped), (1, 1));
        let targets: Vec<f64> = loaded.samples.iter().map(|s| s.target).collect();
        assert_eq!(targets, expected);
        // Scored by the search only: the positions before the scored moves
        // (odd plies), each with the target of +100.
        let scored = load_samples(text.as_bytes(), 0.0).unwrap();
        let expected_odd = expected_plies.iter().filter(|&&ply| ply % 2 == 1).count();
        assert_eq!(scored.samples.len(), expected_odd);
        let hundred = 1.0 / (1.0 + (-SEARCH_SCALE * 100.0).exp());
        assert!(
            scored
                .samples
                .iter()
                .all(|s| (s.target - hundred).abs() < 1e-12)
        );
    }

    #[test]
    fn a_missing_file_and_a_bad_weight_are_told_apart() {
        let missing = [PathBuf::from("/nonexistent/games.jsonl")];
        let mut out = Vec::new();
        match run(&missing, 0.5, &mut out) {
            Err(TuneError::Open { path, source }) => {
                assert_eq!(path, missing[0]);
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            run(&missing, 2.0, &mut out),
            Err(TuneError::ResultWeight(weight)) if weight == 2.0
        ));
        let illegal = format!(
            r#"{{"game":1,"round":1,"white":"a","black":"b","result":"1/2-1/2","verdict":"Draw","termination":"repetition","reason":"x","fen":"{}","book":["f1f3"],"moves":[],"white_time_control":"-","black_time_control":"-","final_fen":"-","date":"2026.11.30"}}"#,
            crate::rules::START_FEN
        );
        let error = load_samples(illegal.as_bytes(), 1.0).unwrap_err();
        assert!(
            matches!(&error, RecordError::IllegalMove { line: 1, book: true, text, .. } if text == "f1f3"),
            "{error:?}"
        );
        assert!(out.is_empty());
    }
}
