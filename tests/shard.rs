//! A match split into shards played by separate processes, merged by
//! `agon stats`, gives the same games and statistics as one process
//! playing them all; an SPRT split over shards stops once the merged test
//! is decided.

mod common;
use common::{AGON, comparable_records, last_summary, scratch_dir};

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A fixed-node match between two agon settings: every game is repeatable.
fn fixed_node_match(dir: &Path, extra: &[&str]) -> Command {
    let engine = format!("cmd={AGON}");
    let mut command = Command::new(AGON);
    command
        .args(["match", "-engine", &engine, "name=n300", "nodes=300"])
        .args(["-engine", &engine, "name=n600", "nodes=600"])
        .args([
            "-each",
            "option.Hash=1",
            "-games",
            "6",
            "-rounds",
            "2",
            "-repeat",
        ])
        .args([
            "-openings",
            "random",
            "plies=4",
            "seed=11",
            "-maxmoves",
            "50",
        ])
        .arg("-jsonl")
        .arg(dir.join("games.jsonl"))
        .arg("-state")
        .arg(dir.join("state.json"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[test]
fn four_shards_merge_into_the_games_and_statistics_of_one_run() {
    let whole_dir = scratch_dir("whole");
    let whole = fixed_node_match(&whole_dir, &["-concurrency", "2"])
        .output()
        .unwrap();
    assert!(whole.status.success(), "{}", text(&whole));
    let expected_records = comparable_records(&whole_dir.join("games.jsonl"));
    assert_eq!(expected_records.len(), 12);
    let expected_summary = last_summary(&text(&whole));

    let dir = scratch_dir("parts");
    let shards: Vec<_> = (1..=4)
        .map(|k| {
            fixed_node_match(&dir, &["-shard", &format!("{k}/4")])
                .spawn()
                .unwrap()
        })
        .collect();
    for (k, shard) in (1..=4).zip(shards) {
        let output = shard.wait_with_output().unwrap();
        let shard_text = text(&output);
        assert!(output.status.success(), "shard {k}: {shard_text}");
        assert!(
            shard_text.contains(&format!("Shard {k}/4: ")),
            "{shard_text}"
        );
        assert!(
            dir.join(format!("state.shard-{k}-of-4.json")).exists(),
            "{shard_text}"
        );
    }
    let states: Vec<String> = (1..=4)
        .map(|k| {
            dir.join(format!("state.shard-{k}-of-4.json"))
                .display()
                .to_string()
        })
        .collect();
    let merged_jsonl = dir.join("merged.jsonl");
    let merged = Command::new(AGON)
        .arg("stats")
        .args(&states)
        .arg("--jsonl")
        .arg(&merged_jsonl)
        .output()
        .unwrap();
    let merged_text = text(&merged);
    assert!(
        merged.status.success(),
        "{merged_text}{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert!(
        merged_text.starts_with("Merged 4 state file(s): 12 of 12 games\n"),
        "{merged_text}"
    );
    assert_eq!(comparable_records(&merged_jsonl), expected_records);
    assert_eq!(last_summary(&merged_text), expected_summary);
    // Each shard's own record file holds its games only; together they are all.
    let mut games: Vec<u64> = (1..=4)
        .flat_map(|k| comparable_records(&dir.join(format!("games.shard-{k}-of-4.jsonl"))))
        .map(|r| r["game"].as_u64().unwrap())
        .collect();
    games.sort_unstable();
    assert_eq!(games, (1..=12).collect::<Vec<u64>>());

    // Shards of another run, or one shard twice, are refused.
    let twice = stats(&[&states[0], &states[0]]);
    assert!(!twice.status.success());
    assert!(String::from_utf8_lossy(&twice.stderr).contains("given twice"));
    let foreign = stats(&[Path::new(&states[0]), &whole_dir.join("state.json")]);
    assert!(!foreign.status.success());
    assert!(String::from_utf8_lossy(&foreign.stderr).contains("not a shard of the run"));

    // A state file that claims a vast shard count, or a game outside the
    // run, is read without running out of memory or counting that game.
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&states[0]).unwrap()).unwrap();
    let edited = dir.join("edited.json");
    let mut vast = original.clone();
    vast["shard"] = serde_json::json!([1, u64::MAX]);
    std::fs::write(&edited, vast.to_string()).unwrap();
    let counted = stats(&[&edited]);
    let counted_text = text(&counted);
    assert!(counted.status.success(), "{counted_text}");
    assert!(
        counted_text.contains(&format!(
            "no state of shard(s) 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21 and {} more",
            u64::MAX - 21
        )),
        "{counted_text}"
    );
    let mut outside = original;
    outside["standing"]["open"] = serde_json::json!({ "0": "1-0" });
    std::fs::write(&edited, outside.to_string()).unwrap();
    let refused = stats(&[&edited]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("game 0 is not one of the 12 games"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// `agon stats` over `states`.
fn stats(states: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(AGON)
        .arg("stats")
        .args(states)
        .output()
        .unwrap()
}

fn sprt_shard(dir: &Path, shard: &str, extra: &[&str]) -> Output {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines/scripted.py")
        .display()
        .to_string();
    // Mostly draws; b loses every 11th game, a every 23rd: hundreds of games
    // to decide. The engines answer at once; 10 s per move keeps a loaded
    // machine from turning a slow answer into a time forfeit.
    Command::new(AGON)
        .args(["match", "-engine", &format!("cmd={engine}"), "name=a"])
        .arg(format!("args=pattern {}i", "d".repeat(22)))
        .args(["-engine", &format!("cmd={engine}"), "name=b"])
        .arg(format!("args=pattern {}i", "d".repeat(10)))
        .args([
            "-each",
            "st=10",
            "-games",
            "2000",
            "-repeat",
            "-ratinginterval",
            "100000",
        ])
        .args(["-sprt", "elo0=0", "elo1=40", "-shard", shard])
        .arg("-state")
        .arg(dir.join("sprt.json"))
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn an_sprt_split_over_shards_stops_on_the_merged_result() {
    let dir = scratch_dir("sprt");
    // Shard 2 plays 100 games and stops; shard 1 then counts them with its own.
    let second = sprt_shard(&dir, "2/2", &["-maxgames", "100"]);
    let second_text = text(&second);
    assert!(second.status.success(), "{second_text}");
    assert!(
        second_text.contains("-maxgames limit: 100 of 1000"),
        "{second_text}"
    );
    let first = sprt_shard(&dir, "1/2", &[]);
    let first_text = text(&first);
    assert!(first.status.success(), "{first_text}");
    let decided = first_text
        .lines()
        .find(|l| l.starts_with("SPRT decided on the games of all shards"))
        .unwrap_or_else(|| panic!("{first_text}"));
    let played = first_text.matches("Finished game").count();
    // The merged test counted shard 2's games besides shard 1's own, and
    // shard 1 stopped at once (one game may finish while the test decides).
    let counted: usize = decided
        .split(['(', ' '])
        .find_map(|word| word.parse().ok())
        .unwrap_or_else(|| panic!("{decided}"));
    assert!(
        counted > 100 && (counted..=counted + 1).contains(&(played + 100)),
        "{decided}: {played}"
    );
    assert!(played < 1000, "{first_text}");

    // Alone, the same test needs more games than shard 1 played.
    let alone_dir = scratch_dir("sprt-alone");
    let alone = sprt_shard(&alone_dir, "1/1", &[]);
    let alone_text = text(&alone);
    assert!(
        alone_text.contains("SPRT decided: H1 was accepted"),
        "{alone_text}"
    );
    let alone_games = alone_text.matches("Finished game").count();
    assert!(played < alone_games, "{played} {alone_games}: {decided}");
}

#[test]
fn a_rerun_task_of_a_slurm_array_plays_its_own_shard() {
    let dir = scratch_dir("rerun-task");
    // sbatch --array=3: Slurm says the array has one task, task 3.
    let rerun = [
        ("SLURM_ARRAY_TASK_ID", "3"),
        ("SLURM_ARRAY_TASK_MIN", "3"),
        ("SLURM_ARRAY_TASK_MAX", "3"),
        ("SLURM_ARRAY_TASK_COUNT", "1"),
    ];
    let refused = fixed_node_match(&dir, &["-shard", "auto"])
        .envs(rerun)
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{}", text(&refused));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("auto/N"), "{message}");
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "files were written"
    );
    let played = fixed_node_match(&dir, &["-shard", "auto/4", "-maxgames", "1"])
        .envs(rerun)
        .output()
        .unwrap();
    let played_text = text(&played);
    assert!(played.status.success(), "{played_text}");
    assert!(
        played_text.starts_with("Shard 3/4: 2 of the 12 games"),
        "{played_text}"
    );
    assert!(dir.join("state.shard-3-of-4.json").exists());
}
