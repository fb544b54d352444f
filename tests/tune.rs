//! End-to-end test of `agon tune` on records written by `agon match`.

mod common;
use common::{AGON, run_agon, scratch_dir};

#[test]
fn tune_fits_every_weight_from_match_records() {
    let dir = scratch_dir("tune");
    let records = dir.join("games.jsonl");
    let records = records.to_str().unwrap();
    let engine = format!("cmd={AGON}");
    let played = run_agon(&[
        "match",
        "-engine",
        &engine,
        "name=a",
        "-engine",
        &engine,
        "name=b",
        "-each",
        "nodes=400",
        "-games",
        "6",
        "-repeat",
        "-openings",
        "random",
        "plies=4",
        "seed=5",
        "-maxmoves",
        "60",
        "-jsonl",
        records,
    ]);
    assert!(played.status.success());

    let tuned = run_agon(&["tune", records]);
    let text = String::from_utf8_lossy(&tuned.stdout);
    assert!(tuned.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("games 6 (lines skipped 0), quiet positions "));
    let quiet: usize = lines[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert!(quiet > 100, "{quiet}");
    let (before, after) = lines[2]
        .strip_prefix("mean squared error ")
        .and_then(|rest| rest.split_once(" -> "))
        .expect("the errors");
    // The fit moves the weights, and that lowers the error.
    assert!(after.parse::<f64>().unwrap() < before.parse::<f64>().unwrap());
    let options: Vec<&str> = lines[3..].to_vec();
    let terms = agon::search::eval::Term::ALL;
    assert_eq!(options.len(), terms.len());
    let mut moved = 0;
    for (line, term) in options.iter().zip(terms) {
        let value: u32 = line
            .strip_prefix(&format!("setoption name {} value ", term.option_name()))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{line} for {term:?}"));
        moved += usize::from(value != 100);
    }
    assert!(moved > 0, "no weight changed: {options:?}");

    for bad in [
        vec!["tune", "/nonexistent/games.jsonl"],
        vec!["tune", "--result-weight", "2", records],
    ] {
        let refused = run_agon(&bad);
        assert!(!refused.status.success(), "{bad:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).starts_with("error: "));
    }
}
