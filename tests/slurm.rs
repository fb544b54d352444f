//! The Slurm recipe for real: `contrib/slurm/match-array.sbatch` submitted
//! with `sbatch --array` to a running Slurm plays a fixed-node match as 4
//! shards, and `agon stats` merges them into the games and statistics of
//! the same match played by one process.
//!
//! Needs a running Slurm with `sbatch` and a shared file system, so it is
//! ignored by plain `cargo test`; `contrib/test-everything.sh` starts a
//! single-node Slurm (`contrib/slurm/single-node.sh`) and runs it.

mod common;
use common::{comparable_records, last_summary};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const AGON: &str = env!("CARGO_BIN_EXE_agon");

fn match_args(dir: &Path) -> Vec<String> {
    let engine = format!("cmd={AGON}");
    [
        "-engine",
        &engine,
        "name=n300",
        "nodes=300",
        "-engine",
        &engine,
        "name=n600",
        "nodes=600",
        "-each",
        "option.Hash=1",
        "-games",
        "4",
        "-rounds",
        "2",
        "-repeat",
        "-openings",
        "random",
        "plies=4",
        "seed=5",
        "-maxmoves",
        "50",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "-jsonl".to_string(),
        dir.join("games.jsonl").display().to_string(),
        "-state".to_string(),
        dir.join("state.json").display().to_string(),
    ])
    .collect()
}

fn scratch(name: &str) -> PathBuf {
    // Under the target directory: on a cluster it would be a shared file
    // system; here the one node sees it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs a running Slurm with sbatch (contrib/slurm/single-node.sh); contrib/test-everything.sh"]
fn a_slurm_job_array_of_shards_merges_into_the_single_run() {
    let whole_dir = scratch("whole");
    let whole = Command::new(AGON)
        .arg("match")
        .args(match_args(&whole_dir))
        .output()
        .unwrap();
    let whole_text = String::from_utf8_lossy(&whole.stdout).into_owned();
    assert!(whole.status.success(), "{whole_text}");

    let dir = scratch("array");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/match-array.sbatch");
    let started = Instant::now();
    let submitted = Command::new("sbatch")
        .args(["--wait", "--array=1-4", "--cpus-per-task=1", "--chdir"])
        .arg(&dir)
        .arg(format!("--export=ALL,AGON={AGON}"))
        .arg(&script)
        .args(match_args(&dir))
        .output()
        .expect("sbatch runs");
    let message = format!(
        "{}{}",
        String::from_utf8_lossy(&submitted.stdout),
        String::from_utf8_lossy(&submitted.stderr)
    );
    assert!(submitted.status.success(), "sbatch: {message}");
    eprintln!(
        "job array of 4 shards done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let states: Vec<PathBuf> = (1..=4)
        .map(|k| dir.join(format!("state.shard-{k}-of-4.json")))
        .collect();
    for (k, state) in (1..=4).zip(&states) {
        assert!(state.exists(), "shard {k} left no state: {message}");
    }
    let merged_jsonl = dir.join("merged.jsonl");
    let merged = Command::new(AGON)
        .arg("stats")
        .args(&states)
        .arg("--jsonl")
        .arg(&merged_jsonl)
        .output()
        .unwrap();
    let merged_text = String::from_utf8_lossy(&merged.stdout).into_owned();
    assert!(merged.status.success(), "{merged_text}");
    assert!(
        merged_text.starts_with("Merged 4 state file(s): 8 of 8 games"),
        "{merged_text}"
    );
    assert_eq!(
        comparable_records(&merged_jsonl),
        comparable_records(&whole_dir.join("games.jsonl"))
    );
    assert_eq!(last_summary(&merged_text), last_summary(&whole_text));
}
