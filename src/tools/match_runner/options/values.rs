//! Readers of option values: numbers at their type and in their range,
//! times, clocks, engine specs, openings and SPRT settings.

use super::table::{ENGINE_KEYS, EngineReading};
use super::*;
use crate::tools::stats::{SprtConfig, SprtModel};
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub(super) fn flag(name: &str, values: &[&str]) -> Parsed<()> {
    if values.is_empty() {
        Ok(())
    } else {
        Err(format!("{name} takes no value, got '{}'", values.join(" ")).into())
    }
}

pub(super) fn single<'a>(name: &str, values: &[&'a str]) -> Parsed<&'a str> {
    match values {
        [value] => Ok(value),
        [] => Err(format!("{name} needs a value").into()),
        _ => Err(format!("{name} takes one value, got '{}'", values.join(" ")).into()),
    }
}

pub(super) fn path_value(name: &str, values: &[&str]) -> Parsed<PathBuf> {
    let path = single(name, values)?;
    if path.is_empty() {
        return Err(format!("{name} needs a file name").into());
    }
    Ok(PathBuf::from(path))
}

/// A whole number of type `T` within `range`, or a message saying which one was wanted.
pub(super) fn ranged<T>(name: &str, text: &str, range: RangeInclusive<T>) -> Parsed<T>
where
    T: FromStr + PartialOrd + fmt::Display,
{
    match text.parse::<T>() {
        Ok(value) if range.contains(&value) => Ok(value),
        Ok(value) if value < *range.start() => {
            Err(format!("{name} must be at least {}, got {text}", range.start()).into())
        }
        _ => Err(format!(
            "{name}: '{text}' is not a whole number from {} to {}",
            range.start(),
            range.end()
        )
        .into()),
    }
}

/// Milliseconds from `least` up to [`MAX_TIME`].
pub(super) fn milliseconds(name: &str, text: &str, least: u64) -> Parsed<Duration> {
    let most = MAX_TIME.as_millis() as u64;
    ranged(name, text, least..=most).map(Duration::from_millis)
}

pub(super) fn key_values<'a>(name: &str, values: &[&'a str]) -> Parsed<Vec<(&'a str, &'a str)>> {
    values
        .iter()
        .map(|item| {
            item.split_once('=')
                .ok_or_else(|| format!("{name}: expected KEY=VALUE, got '{item}'").into())
        })
        .collect()
}

/// Seconds (a decimal number) from 0 up to [`MAX_TIME`].
pub(super) fn seconds_value(key: &str, text: &str) -> Parsed<Duration> {
    let out_of_range = || {
        UsageError(format!(
            "{key}: '{text}' is not a number of seconds from 0 to {}",
            MAX_TIME.as_secs()
        ))
    };
    let value: f64 = text.parse().map_err(|_| out_of_range())?;
    match Duration::try_from_secs_f64(value) {
        Ok(duration) if duration <= MAX_TIME => Ok(duration),
        _ => Err(out_of_range()),
    }
}

/// Parses a clock such as `40/60+0.6`, `10+0.1`, `1:30+1` or `inf` (no clock).
pub(super) fn parse_clock(text: &str) -> Parsed<Option<ClockControl>> {
    if text == "inf" || text == "infinite" {
        return Ok(None);
    }
    let (moves, rest) = match text.split_once('/') {
        Some((moves, rest)) => (Some(ranged("tc moves", moves, 1..=u32::MAX)?), rest),
        None => (None, text),
    };
    let (base, increment) = match rest.split_once('+') {
        Some((base, increment)) => (base, seconds_value("tc increment", increment)?),
        None => (rest, Duration::ZERO),
    };
    let base = match base.split_once(':') {
        Some((minutes, secs)) => {
            let minutes = ranged("tc minutes", minutes, 0..=MAX_TIME.as_secs() / 60)?;
            Duration::from_secs(60 * minutes)
                .checked_add(seconds_value("tc seconds", secs)?)
                .filter(|base| *base <= MAX_TIME)
                .ok_or_else(|| format!("tc={text}: the base time is over {MAX_TIME:?}"))?
        }
        None => seconds_value("tc", base)?,
    };
    if base.is_zero() && increment.is_zero() {
        return Err(format!("tc={text} gives no time at all").into());
    }
    Ok(Some(ClockControl {
        moves,
        base,
        increment,
    }))
}

pub(super) fn engine_spec(keys: &[(&str, &str)]) -> Parsed<EngineSpec> {
    let mut reading = EngineReading {
        cmd: None,
        name: None,
        args: Vec::new(),
        options: Vec::new(),
        limits: Limits::default(),
        infinite: false,
    };
    for &(key, value) in keys {
        let spec = ENGINE_KEYS
            .iter()
            .find(|spec| spec.matches(key))
            .ok_or_else(|| format!("unknown engine key '{key}' (see agon match --help)"))?;
        (spec.apply)(&mut reading, key, value)?;
    }
    let EngineReading {
        cmd,
        name,
        args,
        options,
        limits,
        infinite,
    } = reading;
    let cmd = cmd.ok_or("every -engine needs cmd=<path>")?;
    if cmd.is_empty() {
        return Err("cmd= needs a program".into());
    }
    let name = name.unwrap_or_else(|| cmd.clone());
    if limits.clock.is_some() && limits.movetime.is_some() {
        return Err(format!("engine {name}: give tc= or st=, not both").into());
    }
    if limits == Limits::default() {
        return Err(if infinite {
            format!("engine {name}: tc=inf needs depth= or nodes= to end a search")
        } else {
            format!("engine {name}: needs tc=, st=, depth= or nodes=")
        }
        .into());
    }
    Ok(EngineSpec {
        name,
        cmd,
        args,
        options,
        limits,
    })
}

pub(super) fn parse_openings(values: &[&str]) -> Parsed<OpeningSource> {
    let mut path = None;
    let mut format = OpeningFormat::Fen;
    let mut random_order = false;
    let mut plies = None;
    let mut start = 1;
    let mut generated = false;
    for value in values {
        if *value == "random" {
            generated = true;
            continue;
        }
        let (key, text) = value
            .split_once('=')
            .ok_or_else(|| format!("-openings: expected KEY=VALUE or 'random', got '{value}'"))?;
        match key {
            "file" => path = Some(PathBuf::from(text)),
            "format" => {
                format = match text {
                    "fen" | "epd" => OpeningFormat::Fen,
                    "moves" => OpeningFormat::Moves,
                    _ => {
                        return Err(
                            format!("-openings: format '{text}' is not fen or moves").into()
                        );
                    }
                }
            }
            "order" => {
                random_order = match text {
                    "random" => true,
                    "sequential" => false,
                    _ => {
                        return Err(format!(
                            "-openings: order '{text}' is not random or sequential"
                        )
                        .into());
                    }
                }
            }
            "plies" => plies = Some(ranged("plies", text, 0..=MAX_OPENING_PLIES)?),
            "start" => start = ranged("start", text, 1..=usize::MAX)?,
            // Accepted for the generated openings; the run's -seed does the same job.
            "seed" => {
                ranged("seed", text, 0..=u64::MAX)?;
            }
            _ => return Err(format!("-openings: unknown key '{key}'").into()),
        }
    }
    match (generated, path) {
        (true, Some(_)) => Err("-openings: give file= or random, not both".into()),
        (true, None) => Ok(OpeningSource::Random {
            plies: plies.ok_or("-openings random needs plies=N")?,
        }),
        (false, Some(path)) => Ok(OpeningSource::File {
            path,
            format,
            random_order,
            plies,
            start,
        }),
        (false, None) => Err("-openings needs file=<path> or random".into()),
    }
}

/// The seed given inside `-openings random seed=S`, which stands in for `-seed`.
pub fn openings_seed(args: &[String]) -> Option<u64> {
    let groups = groups(args).ok()?;
    groups
        .iter()
        .filter(|(name, _)| *name == "-openings")
        .flat_map(|(_, values)| values.iter())
        .find_map(|value| value.strip_prefix("seed=")?.parse().ok())
}

pub(super) fn parse_sprt(values: &[&str]) -> Parsed<SprtConfig> {
    let mut numbers = [None; 4];
    let mut model = SprtModel::Normalized;
    for (key, text) in key_values("-sprt", values)? {
        let slot = match key {
            "elo0" => 0,
            "elo1" => 1,
            "alpha" => 2,
            "beta" => 3,
            "model" => {
                model = match text {
                    "normalized" => SprtModel::Normalized,
                    "logistic" => SprtModel::Logistic,
                    _ => {
                        return Err(
                            format!("-sprt: model '{text}' is not normalized or logistic").into(),
                        );
                    }
                };
                continue;
            }
            _ => return Err(format!("-sprt: unknown key '{key}'").into()),
        };
        let value: f64 = text
            .parse()
            .map_err(|_| format!("-sprt: {key}='{text}' is not a number"))?;
        numbers[slot] = Some(value);
    }
    let [Some(elo0), Some(elo1), alpha, beta] = numbers else {
        return Err("-sprt needs elo0= and elo1=".into());
    };
    SprtConfig::new(
        elo0,
        elo1,
        alpha.unwrap_or(0.05),
        beta.unwrap_or(0.05),
        model,
    )
    .map_err(|e| UsageError::from(e.to_string()))
}
