//! End-to-end tests of `agon datagen` and `agon train` through the binary:
//! records appended across runs, progress on stderr, a network that the
//! engine loads with `EvalFile`, and training that lowers the validation
//! loss.

mod common;
use common::{Agon, run_agon, scratch_dir};
use std::time::Duration;

/// Bytes per record (protocol.md, "Training records").
const RECORD_SIZE: u64 = 26;

fn datagen(path: &str, games: &str, seed: &str) -> String {
    let run = run_agon(&[
        "datagen",
        "--output",
        path,
        "--nodes",
        "300",
        "--threads",
        "2",
        "--games",
        games,
        "--seed",
        seed,
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    stderr
}

/// The validation losses `agon train` printed, epoch 0 (untrained) first.
fn validation_losses(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|line| line.split("validation loss ").nth(1))
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn datagen_appends_records_and_train_makes_a_network_that_learns() {
    let dir = scratch_dir("datagen");
    let data = dir.join("games.bin");
    let data = data.to_str().unwrap();
    let first = datagen(data, "12", "1");
    let last = first.lines().last().unwrap();
    assert!(
        last.starts_with("games 12 positions ")
            && last.contains(" W/D/L ")
            && last.contains("time left"),
        "{first}"
    );
    let size = std::fs::metadata(data).unwrap().len();
    assert!(size > 0 && size.is_multiple_of(RECORD_SIZE), "{size}");
    let positions: u64 = last.split(' ').nth(3).unwrap().parse().unwrap();
    assert_eq!(positions * RECORD_SIZE, size, "{last}");

    // A torn record (a run killed mid-write) is dropped, and a second run
    // appends its own games.
    std::fs::OpenOptions::new()
        .append(true)
        .open(data)
        .and_then(|mut file| std::io::Write::write_all(&mut file, &[1, 2, 3]))
        .unwrap();
    let second = datagen(data, "12", "1");
    assert!(
        second.contains(&format!("({positions} records already)")),
        "{second}"
    );
    let grown = std::fs::metadata(data).unwrap().len();
    assert!(
        grown > size && grown.is_multiple_of(RECORD_SIZE),
        "{size} -> {grown}"
    );

    let network = dir.join("test.nnue");
    let network = network.to_str().unwrap();
    let train = |epochs: &str| {
        let run = run_agon(&[
            "train",
            data,
            "--output",
            network,
            "--epochs",
            epochs,
            "--batch",
            "256",
            "--lr",
            "0.003",
            "--validation",
            "0.1",
            "--seed",
            "5",
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        String::from_utf8_lossy(&run.stdout).to_string()
    };
    let stdout = train("6");
    let losses = validation_losses(&stdout);
    assert_eq!(losses.len(), 7, "{stdout}");
    assert!(
        losses[6] < losses[0] * 0.8,
        "validation loss did not fall: {stdout}"
    );
    assert_eq!(
        validation_losses(&train("6")),
        losses,
        "the same seed trains the same network"
    );

    // The engine plays with the trained network and refuses a bad file.
    let mut engine = Agon::start(&[]);
    assert!(
        engine
            .ask(&format!("setoption name EvalFile value {network}"))
            .is_empty()
    );
    engine.send("position startpos");
    let eval = engine.ask("eval");
    assert!(
        eval[0].starts_with("network ") && eval[0].contains(network),
        "{eval:?}"
    );
    engine.send("go nodes 2000");
    engine.expect_line(
        |line| line.starts_with("bestmove "),
        Duration::from_secs(20),
    );
    let refused = engine.ask(&format!("setoption name EvalFile value {data}"));
    assert!(
        refused.len() == 1 && refused[0].starts_with("info string error: option 'EvalFile'"),
        "{refused:?}"
    );
    let eval = engine.ask("eval");
    assert!(
        eval[0].contains(network),
        "the network is unchanged: {eval:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn datagen_refuses_bad_arguments() {
    let dir = scratch_dir("datagen-bad");
    let data = dir.join("x.bin");
    let data = data.to_str().unwrap();
    for args in [
        vec![
            "datagen",
            "--output",
            data,
            "--threads",
            "0",
            "--games",
            "1",
        ],
        vec![
            "datagen", "--output", data, "--eval", "magic", "--games", "1",
        ],
        vec![
            "datagen",
            "--output",
            "/nonexistent/dir/x.bin",
            "--games",
            "1",
        ],
        vec!["train", "/nonexistent.bin", "--output", data],
    ] {
        let run = run_agon(&args);
        assert!(!run.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&run.stderr).starts_with("error: "),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
