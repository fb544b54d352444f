//! `agon train` through the binary, on records made by `agon datagen`: a
//! run killed mid-epoch leaves the previous network or the next one, never
//! part of one; `--resume` continues to the same losses as an uninterrupted
//! run; the embedded network is not trained into unless asked; `--init`
//! starts from a network's weights; result weights out of range are
//! refused before any work.

mod common;
use agon::search::nnue::{FILE_SIZE, Network};
use common::{AGON, run_agon, scratch_dir};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A small record file from a real datagen run.
fn records(dir: &Path) -> String {
    let data = dir.join("data.bin");
    let data = data.to_str().unwrap().to_string();
    let run = run_agon(&[
        "datagen",
        "--output",
        &data,
        "--nodes",
        "200",
        // One thread writes the games in one order, so the validation split,
        // and with it every loss compared below, is the same on each run.
        "--threads",
        "1",
        "--games",
        "16",
        "--seed",
        "3",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    data
}

fn train_args<'a>(data: &'a str, output: &'a str, epochs: &'a str) -> Vec<&'a str> {
    vec![
        "train",
        data,
        "--output",
        output,
        "--epochs",
        epochs,
        "--batch",
        "64",
        "--lr",
        "0.003",
        "--validation",
        "0.1",
        "--seed",
        "9",
        "--threads",
        "2",
    ]
}

/// The epoch lines of `stdout` without their times: `(epoch, losses)`.
fn epoch_losses(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|line| line.starts_with("epoch ") && line.contains(" train loss "))
        .map(|line| {
            let (epoch, rest) = line.split_once(" train loss ").unwrap();
            let losses = rest.rsplit_once(" (").map_or(rest, |(losses, _)| losses);
            (epoch.to_string(), losses.to_string())
        })
        .collect()
}

fn train(args: &[&str]) -> String {
    let run = run_agon(args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).to_string()
}

#[test]
fn a_run_killed_mid_epoch_leaves_a_whole_network_and_resumes_to_the_same_losses() {
    let dir = scratch_dir("train-kill");
    let data = records(&dir);
    let whole = dir.join("whole.nnue");
    let whole = whole.to_str().unwrap();
    let uninterrupted = epoch_losses(&train(&train_args(&data, whole, "8")));
    assert_eq!(uninterrupted.len(), 8, "{uninterrupted:?}");

    // While the run goes, the network file is watched without pause: it is
    // absent or a whole network, never being rewritten in place.
    let killed = dir.join("killed.nnue");
    let killed = killed.to_str().unwrap().to_string();
    let running = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (running, killed) = (Arc::clone(&running), killed.clone());
        std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while running.load(Ordering::SeqCst) {
                if let Ok(metadata) = std::fs::metadata(&killed) {
                    seen.insert(metadata.len());
                }
            }
            seen
        })
    };
    let mut child = Command::new(AGON)
        .args(train_args(&data, &killed, "8"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Killed in the middle of epoch 4, after epoch 3 was written.
    let mut before_kill = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        before_kill.push_str(&line);
        before_kill.push('\n');
        if line.starts_with("epoch 3 ") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    running.store(false, Ordering::SeqCst);
    let sizes = watcher.join().unwrap();
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        vec![FILE_SIZE as u64],
        "the network file was seen part-written"
    );
    Network::load(Path::new(&killed)).expect("the network left by the kill loads");

    let mut resume = train_args(&data, &killed, "8");
    resume.push("--resume");
    let resumed = train(&resume);
    assert!(resumed.contains("resuming after epoch "), "{resumed}");
    let resumed = epoch_losses(&resumed);
    let done_before = 8 - resumed.len();
    assert!(done_before >= 3, "{resumed:?}");
    assert_eq!(
        resumed,
        uninterrupted[done_before..],
        "the resumed run goes on as the uninterrupted one"
    );
    assert_eq!(
        epoch_losses(&before_kill)[..],
        uninterrupted[..3],
        "{before_kill}"
    );
    assert_eq!(
        std::fs::read(&killed).unwrap(),
        std::fs::read(whole).unwrap(),
        "the same network in the end"
    );

    // A resume with other settings is refused rather than mixed.
    let mut other = train_args(&data, &killed, "9");
    other[7] = "128";
    other.push("--resume");
    let run = run_agon(&other);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && stderr.contains("cannot resume"),
        "{stderr}"
    );
}

#[test]
fn the_embedded_network_is_trained_into_only_when_asked() {
    let dir = scratch_dir("train-embedded");
    let data = records(&dir);
    let embedded = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
    let before = std::fs::read(embedded).unwrap();
    let nets = dir.join("nets");
    std::fs::create_dir_all(&nets).unwrap();
    let other_tree = nets.join("agon.nnue");
    let other_tree = other_tree.to_str().unwrap();
    for output in [embedded, other_tree] {
        let run = run_agon(&train_args(&data, output, "1"));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && stderr.contains("--replace-embedded"),
            "{output}: {stderr}"
        );
    }
    assert_eq!(std::fs::read(embedded).unwrap(), before);
    assert!(!Path::new(other_tree).exists());
    let mut asked = train_args(&data, other_tree, "1");
    asked.push("--replace-embedded");
    train(&asked);
    Network::load(Path::new(other_tree)).unwrap();
}

/// The validation loss before the first epoch, from a run's output.
fn starting_loss(stdout: &str) -> f64 {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("epoch 0 validation loss "))
        .and_then(|loss| loss.trim().parse().ok())
        .unwrap_or_else(|| panic!("no starting loss in {stdout}"))
}

#[test]
fn init_starts_from_a_trained_network_and_a_bad_one_stops_the_run_at_once() {
    let dir = scratch_dir("train-init");
    let data = records(&dir);
    let from_random = dir.join("random.nnue");
    let from_random = from_random.to_str().unwrap();
    let refined = dir.join("refined.nnue");
    let refined = refined.to_str().unwrap();
    let embedded = agon::search::nnue::EMBEDDED_PATH;

    let random_start = starting_loss(&train(&train_args(&data, from_random, "1")));
    let mut args = train_args(&data, refined, "1");
    args.extend(["--init", embedded]);
    let trained_start = starting_loss(&train(&args));
    // The shipped network already predicts these games; random weights do not.
    assert!(
        trained_start < random_start * 0.8,
        "from the embedded network {trained_start}, from random weights {random_start}"
    );
    Network::load(Path::new(refined)).unwrap();

    // A run started from a network resumes from its checkpoint, which
    // holds the weights: the command is the same with --resume for --init.
    let mut resumed = train_args(&data, refined, "2");
    resumed.push("--resume");
    let resumed = train(&resumed);
    assert!(resumed.contains("resuming after epoch 1"), "{resumed}");

    let missing = dir.join("missing.nnue");
    let mut args = train_args(&data, refined, "1");
    args.extend(["--init", missing.to_str().unwrap()]);
    let run = run_agon(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && stderr.contains("cannot start from --init"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("records"),
        "read the records first: {stderr}"
    );

    let mut args = train_args(&data, refined, "1");
    args.extend(["--init", embedded, "--resume"]);
    let run = run_agon(&args);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot be used with"));
}

#[test]
fn result_weights_outside_zero_to_one_are_refused_before_any_work() {
    let dir = scratch_dir("train-weights");
    let data = records(&dir);
    let output = dir.join("net.nnue");
    let output = output.to_str().unwrap();
    for bad in [
        ["--result-weight", "1.5"],
        ["--throne-race-result-weight", "-0.25"],
        ["--throne-race-result-weight", "2"],
        ["--throne-race-result-weight", "NaN"],
        ["--throne-race-result-weight", "lots"],
    ] {
        let mut args = train_args(&data, output, "1");
        args.extend(bad);
        let run = run_agon(&args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && stderr.starts_with("error: "),
            "{bad:?}: {stderr}"
        );
        assert!(!stderr.contains("records"), "{bad:?} read the records");
        assert!(!Path::new(output).exists(), "{bad:?} wrote a network");
    }
    let mut args = train_args(&data, output, "1");
    args.extend(["--throne-race-result-weight", "1"]);
    train(&args);
    Network::load(Path::new(output)).unwrap();
}

/// Training into one of its own record files would replace the records
/// with a network (or a checkpoint) after the first epoch: an output, or
/// the checkpoint beside it, that is an input under any name is refused
/// and the records stay as they were.
#[test]
fn an_output_that_is_one_of_the_inputs_is_refused() {
    let dir = scratch_dir("train-victim");
    let data = records(&dir);
    let victim = dir.join("victim.bin");
    std::fs::copy(&data, &victim).unwrap();
    let checkpoint_named = dir.join("net.nnue.checkpoint");
    std::fs::copy(&data, &checkpoint_named).unwrap();
    let victim_text = victim.to_str().unwrap();
    let by_another_name = format!("{}/./victim.bin", dir.display());
    let net = dir.join("net.nnue");
    for (input, output) in [
        (victim_text, victim_text),
        (victim_text, by_another_name.as_str()),
        (checkpoint_named.to_str().unwrap(), net.to_str().unwrap()),
    ] {
        let before = std::fs::read(input).unwrap();
        let run = run_agon(&train_args(input, output, "1"));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && stderr.contains("is one of the record files"),
            "{input} -> {output}: {stderr}"
        );
        assert!(
            std::fs::read(input).unwrap() == before,
            "{input} was changed"
        );
    }
    assert!(!net.exists());
}

/// Two runs on one output would write each other's network and checkpoint:
/// while one holds the output, another is refused before any work.
#[test]
fn a_second_run_on_the_same_output_is_refused() {
    let dir = scratch_dir("train-locked");
    let data = records(&dir);
    let output = dir.join("net.nnue");
    let held = agon::tools::run_lock::RunLock::take(&output).unwrap();
    let run = run_agon(&train_args(&data, output.to_str().unwrap(), "1"));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && stderr.contains("another process is running on it now"),
        "{stderr}"
    );
    assert!(!stderr.contains("records"), "read the records: {stderr}");
    assert!(!output.exists());
    drop(held);
    train(&train_args(&data, output.to_str().unwrap(), "1"));
    Network::load(&output).unwrap();
}

/// An output that cannot be written (its directory missing, or a directory
/// itself) fails before the records are read, not after an epoch.
#[test]
fn an_output_that_cannot_be_written_fails_before_the_records_are_read() {
    let dir = scratch_dir("train-unwritable");
    let data = records(&dir);
    let missing = dir.join("missing").join("net.nnue");
    let directory = dir.join("a-directory");
    std::fs::create_dir(&directory).unwrap();
    for output in [&missing, &directory] {
        let run = run_agon(&train_args(&data, output.to_str().unwrap(), "1"));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && stderr.starts_with("error: cannot write"),
            "{}: {stderr}",
            output.display()
        );
        assert!(
            !stderr.contains("records"),
            "{}: read the records: {stderr}",
            output.display()
        );
    }
}

/// A split that leaves no position to train on, or none to validate on
/// although a share was asked, is refused instead of writing an untrained
/// network or reporting a validation loss of nothing.
#[test]
fn a_split_that_leaves_a_side_empty_is_refused() {
    let dir = scratch_dir("train-empty-split");
    let data = records(&dir);
    let ten = dir.join("ten.bin");
    let bytes = std::fs::read(&data).unwrap();
    std::fs::write(&ten, &bytes[..10 * 26]).unwrap();
    let ten = ten.to_str().unwrap();
    let output = dir.join("net.nnue");
    let output = output.to_str().unwrap();
    for (share, expected) in [
        ("0.99", "no position to train on"),
        ("0.02", "none to validate on"),
    ] {
        let mut args = train_args(ten, output, "1");
        args[11] = share;
        let run = run_agon(&args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && stderr.contains(expected),
            "--validation {share}: {stderr}"
        );
        assert!(
            !Path::new(output).exists(),
            "--validation {share} wrote a network"
        );
    }
    let mut args = train_args(ten, output, "1");
    args[11] = "0";
    train(&args);
    Network::load(Path::new(output)).unwrap();
}
