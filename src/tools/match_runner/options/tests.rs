//! Tests of the `agon match` command line.

use super::table::ENGINE_KEYS;
use super::values::parse_clock;
use super::*;
use crate::tools::stats::SprtModel;
use std::time::Duration;

fn parse_words(text: &str) -> Result<Request, UsageError> {
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    parse(&args)
}

fn config(text: &str) -> MatchConfig {
    match parse_words(text) {
        Ok(Request::Run(config)) => *config,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn engines_inherit_each_and_override_it() {
    let config = config(
        "-engine cmd=a name=x -engine cmd=b depth=3 option.Hash=16 -each tc=40/60+0.6 -games 4 -repeat",
    );
    assert_eq!(config.engines[0].name, "x");
    assert_eq!(config.engines[1].name, "b");
    assert_eq!(config.engines[1].limits.depth, Some(3));
    assert_eq!(
        config.engines[1].options,
        vec![("Hash".to_string(), "16".to_string())]
    );
    let clock = config.engines[0].limits.clock.unwrap();
    assert_eq!(clock.moves, Some(40));
    assert_eq!(clock.base, Duration::from_secs(60));
    assert_eq!(clock.increment, Duration::from_millis(600));
    assert_eq!(config.total_games(), 4);
    assert_eq!(config.engines[0].limits.describe(), "40/60+0.6");
}

#[test]
fn gauntlet_pairs_the_first_engine_with_each_other() {
    let config = config(
        "-engine cmd=a -engine cmd=b -engine cmd=c -each st=0.1 -tournament gauntlet -rounds 2",
    );
    assert_eq!(config.encounters(), vec![(0, 1), (0, 2)]);
    assert_eq!(config.total_games(), 4);
    let round_robin = self::config("-engine cmd=a -engine cmd=b -engine cmd=c -each st=0.1");
    assert_eq!(round_robin.encounters(), vec![(0, 1), (0, 2), (1, 2)]);
}

#[test]
fn clocks_in_every_spelling() {
    let clock = parse_clock("1:30+1").unwrap().unwrap();
    assert_eq!(clock.base, Duration::from_secs(90));
    assert_eq!(parse_clock("inf").unwrap(), None);
    assert!(parse_clock("0+0").is_err());
    assert!(parse_clock("x+1").is_err());
    assert!(parse_clock("0/10").is_err());
}

#[test]
fn openings_and_sprt_are_read() {
    let config = config(
        "-engine cmd=a -engine cmd=b -each depth=1 -openings random plies=6 seed=3 \
         -sprt elo0=0 elo1=5 alpha=0.05 beta=0.1 model=logistic",
    );
    assert_eq!(config.openings, OpeningSource::Random { plies: 6 });
    let sprt = config.sprt.unwrap();
    assert_eq!(
        (sprt.elo1, sprt.beta, sprt.model),
        (5.0, 0.1, SprtModel::Logistic)
    );
    let args: Vec<String> = "-openings random plies=6 seed=3"
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(openings_seed(&args), Some(3));
}

#[test]
fn bad_command_lines_are_refused_with_a_reason() {
    for (text, expected) in [
        ("-engine cmd=a -each st=1", "at least two"),
        ("-engine cmd=a -engine name=b -each st=1", "cmd="),
        ("-engine cmd=a -engine cmd=b", "needs tc="),
        ("-engine cmd=a -engine cmd=b -each tc=inf", "tc=inf"),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -games 0",
            "at least 1",
        ),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -games",
            "needs a value",
        ),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -bogus",
            "unknown option",
        ),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -sprt elo0=5 elo1=0",
            "less than",
        ),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -openings order=random",
            "file=",
        ),
        ("-engine cmd=a -engine cmd=b -each st=x", "seconds"),
        (
            "-engine cmd=a -engine cmd=b -each st=1 -repeat yes",
            "no value",
        ),
        ("stray", "does not follow"),
    ] {
        let error = parse_words(text).expect_err(text).0;
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn help_is_recognised() {
    assert_eq!(parse_words("--help"), Ok(Request::Help));
}

#[test]
fn numbers_out_of_their_range_are_refused_not_truncated() {
    let base = "-engine cmd=a -engine cmd=b";
    for (text, expected) in [
        ("-each st=1 -maxmoves 4294967296", "from 1 to 4294967295"),
        ("-each depth=4294967296", "from 1 to 4294967295"),
        ("-each nodes=-1", "from 1 to"),
        ("-each st=1 -games -5", "needs a value"),
        ("-each st=1 -concurrency 100000", "from 1 to 1024"),
        ("-each st=1 -timemargin 99999999999999999999", "from 0 to"),
        ("-each st=1 -timeout startup=0", "at least 1"),
        ("-each tc=1000000000:18446744073709500000", "tc minutes"),
        ("-each tc=1:18446744073709500000", "seconds from 0"),
        ("-each tc=10+1e300", "seconds from 0"),
        ("-each tc=inf+1", "seconds"),
        ("-each tc=NaN", "seconds"),
        ("-each st=-1", "seconds"),
        ("-each tc=4294967296/10", "tc moves"),
        ("-each st=1 -openings random plies=100000", "from 0 to 1000"),
        ("-each st=1 -ratinginterval 0", "at least 1"),
        (
            "-each st=1 -games 9223372036854775808 -rounds 2",
            "more games than can be counted",
        ),
        ("-each st=1 -sprt elo0=NaN elo1=5", "less than"),
        ("-each st=1 -sprt elo0=0 elo1=5 alpha=2", "between 0 and 1"),
        ("-each st=1 -shard 5/4", "shard"),
        ("-each st=1 -shard 0/4", "shard"),
        ("-each st=1 -pgnout", "needs a value"),
        ("-each st=1 option.=3", "option name"),
    ] {
        let words = format!("{base} {text}");
        let error = parse_words(&words).expect_err(&words).0;
        assert!(error.contains(expected), "{words}: {error}");
    }
    let longest = config(&format!("{base} -each tc=525599:59.5+31536000"));
    let clock = longest.engines[0].limits.clock.unwrap();
    assert!(clock.base <= MAX_TIME && clock.increment == MAX_TIME);
    let huge = config(&format!(
        "{base} -each st=1 -games 9223372036854775808 -repeat"
    ));
    assert_eq!(huge.total_games(), 9_223_372_036_854_775_808);
}

#[test]
fn the_usage_comes_from_the_tables_with_the_defaults() {
    let text = usage();
    for option in MATCH_OPTIONS {
        assert!(
            text.contains(&format!("  {}", option.name)),
            "{}",
            option.name
        );
    }
    for key in ENGINE_KEYS {
        assert!(text.contains(key.head), "{}", key.head);
    }
    let defaults = MatchConfig::default();
    assert!(text.contains(&format!("[{}]", defaults.time_margin.as_millis())));
    assert!(text.contains("games per encounter and round [1]"), "{text}");
    assert!(text.contains("[roundrobin]"), "{text}");
    assert!(text.contains("[10000 5000 60000]"), "{text}");
    // Every option the usage names is one the parser knows.
    for line in text.lines() {
        if let Some(name) = line.trim_start().strip_prefix('-')
            && !name.starts_with('-')
        {
            let name = format!("-{}", name.split_whitespace().next().unwrap());
            assert!(MATCH_OPTIONS.iter().any(|o| o.name == name), "{name}");
        }
    }
}
