//! The Slurm recipe for real: `contrib/slurm/match-array.sbatch` submitted
//! with `sbatch --array` to a running Slurm plays a fixed-node match as 4
//! shards, and `agon stats` merges them into the games and statistics of
//! the same match played by one process; so does an array whose task is
//! cancelled in the middle and submitted again alone (`--array=3`).
//!
//! Needs a running Slurm with `sbatch` and a shared file system, so it is
//! ignored by plain `cargo test`; `contrib/test-everything.sh` starts a
//! single-node Slurm (`contrib/slurm/single-node.sh`) and runs it.

mod common;
use common::{comparable_records, last_summary};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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
        "name=n1200",
        "nodes=1200",
        "-each",
        "option.Hash=1",
        "-games",
        "8",
        "-rounds",
        "2",
        "-repeat",
        "-openings",
        "random",
        "plies=4",
        "seed=5",
        "-maxmoves",
        "60",
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

/// The match played by one process: its output.
fn whole_run(name: &str) -> (PathBuf, String) {
    let dir = scratch(name);
    let whole = Command::new(AGON)
        .arg("match")
        .args(match_args(&dir))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&whole.stdout).into_owned();
    assert!(whole.status.success(), "{text}");
    (dir, text)
}

/// Submits the recipe as a job array of 4 shards (or some of its tasks).
fn submit(dir: &Path, array: &str, options: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/match-array.sbatch");
    let submitted = Command::new("sbatch")
        .args(options)
        .arg(format!("--array={array}"))
        .args(["--cpus-per-task=1", "--chdir"])
        .arg(dir)
        .arg(format!("--export=ALL,AGON={AGON}"))
        .arg(&script)
        .arg("4")
        .args(match_args(dir))
        .output()
        .expect("sbatch runs");
    assert!(
        submitted.status.success(),
        "sbatch: {}",
        message(&submitted)
    );
    submitted
}

fn message(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Merges the 4 shards' states in `dir` and checks them against the run
/// of one process.
fn assert_merges_into(dir: &Path, whole_dir: &Path, whole_text: &str) {
    let states: Vec<PathBuf> = (1..=4)
        .map(|k| dir.join(format!("state.shard-{k}-of-4.json")))
        .collect();
    for (k, state) in (1..=4).zip(&states) {
        assert!(state.exists(), "shard {k} left no state");
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
    assert!(merged.status.success(), "{}", message(&merged));
    assert!(
        merged_text.starts_with("Merged 4 state file(s): 16 of 16 games"),
        "{merged_text}"
    );
    assert_eq!(
        comparable_records(&merged_jsonl),
        comparable_records(&whole_dir.join("games.jsonl"))
    );
    assert_eq!(last_summary(&merged_text), last_summary(whole_text));
}

#[test]
#[ignore = "needs a running Slurm with sbatch (contrib/slurm/single-node.sh); contrib/test-everything.sh"]
fn a_slurm_job_array_of_shards_merges_into_the_single_run() {
    let (whole_dir, whole_text) = whole_run("whole");
    let dir = scratch("array");
    let started = Instant::now();
    submit(&dir, "1-4", &["--wait"]);
    eprintln!(
        "job array of 4 shards done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_merges_into(&dir, &whole_dir, &whole_text);
}

/// The job id `sbatch --parsable` printed.
fn job_id(submitted: &Output) -> String {
    let text = String::from_utf8_lossy(&submitted.stdout);
    text.trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Signals task 3 of `job` with `scancel` and `options` once shard 3 has
/// `records` records, then waits until the job is gone; returns what the
/// task printed.
fn stop_task_3(dir: &Path, job: &str, records: usize, options: &[&str]) -> String {
    let file = dir.join("games.shard-3-of-4.jsonl");
    let started = Instant::now();
    while std::fs::read_to_string(&file).map_or(0, |t| t.lines().count()) < records {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "task 3 recorded no game {records}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let cancelled = Command::new("scancel")
        .args(options)
        .arg(format!("{job}_3"))
        .output()
        .unwrap();
    assert!(
        cancelled.status.success(),
        "scancel: {}",
        message(&cancelled)
    );
    let listed = || {
        let queue = Command::new("squeue").args(["-h", "-j", job]).output();
        !String::from_utf8_lossy(&queue.unwrap().stdout)
            .trim()
            .is_empty()
    };
    while listed() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "job {job} did not end"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(dir.join(format!("agon-match-{job}_3.out"))).unwrap_or_default()
}

#[test]
#[ignore = "needs a running Slurm with sbatch (contrib/slurm/single-node.sh); contrib/test-everything.sh"]
fn a_cancelled_task_submitted_again_alone_completes_the_run() {
    let (whole_dir, whole_text) = whole_run("whole-for-rerun");
    let dir = scratch("rerun");
    // Task 3 of the array is cancelled (SIGTERM to every process of it)
    // after its first game, in the middle of its run.
    let job = job_id(&submit(&dir, "1-4", &["--parsable"]));
    let output = stop_task_3(&dir, &job, 1, &[]);
    assert!(
        output.contains("Interrupted after "),
        "task 3 was not stopped in the middle: {output}"
    );
    // Submitted again alone, it is killed outright after one more game.
    let job = job_id(&submit(&dir, "3", &["--parsable"]));
    let output = stop_task_3(&dir, &job, 2, &["--signal=KILL"]);
    assert!(!output.contains("Finished shard"), "{output}");
    // Submitted again, it completes the run.
    submit(&dir, "3", &["--wait"]);
    assert_merges_into(&dir, &whole_dir, &whole_text);
}
