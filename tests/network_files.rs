//! Network files over a real protocol session: `EvalFile` refuses a device,
//! a named pipe, random bytes, a truncated network and weights no trainer makes, at once
//! and with the reason, and the engine keeps playing with the network it
//! had; a legal but extreme network cannot make a static evaluation read
//! as a win.

mod common;
use agon::search::nnue::{BUCKETS, FILE_SIZE, HEADER, HIDDEN, INPUTS, Network};
use common::{Agon, scratch_dir};
use std::time::{Duration, Instant};
/// Inputs times hidden units, plus the hidden biases: the i16 values
/// scaled by QA.
const HIDDEN_VALUES: usize = INPUTS * HIDDEN + HIDDEN;

/// The embedded network in the current file format.
fn embedded() -> Vec<u8> {
    Network::embedded().to_bytes()
}

/// Pseudo-random bytes (xorshift), no two runs alike is not needed.
fn noise(len: usize, mut state: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

fn set_i16(bytes: &mut [u8], index: usize, value: i16) {
    let offset = HEADER + 2 * index;
    bytes[offset..offset + 2].copy_from_slice(&value.to_le_bytes());
}

/// The evaluation `eval` prints for the network, and its name.
fn network_line(engine: &mut Agon) -> String {
    engine.send("position startpos");
    let eval = engine.ask("eval");
    assert!(eval[0].starts_with("network "), "{eval:?}");
    eval[0].clone()
}

#[test]
fn bad_network_files_are_refused_at_once_and_the_engine_plays_on() {
    let dir = scratch_dir("network-files");
    let embedded = embedded();
    assert_eq!(embedded.len(), FILE_SIZE);
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let good = file("good.nnue", &embedded);
    let random = file("random.nnue", &noise(FILE_SIZE, 7));
    let mut random_weights = embedded[..HEADER].to_vec();
    random_weights.extend(noise(FILE_SIZE - HEADER, 8));
    let random_weights = file("random-weights.nnue", &random_weights);
    let truncated = file("truncated.nnue", &embedded[..FILE_SIZE - 1000]);
    let mut beyond = embedded.clone();
    set_i16(&mut beyond, 5, 2000);
    let beyond = file("beyond.nnue", &beyond);

    let fifo = dir.join("fifo.nnue");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap().to_string();

    let mut engine = Agon::start(&[]);
    assert!(
        engine
            .ask(&format!("setoption name EvalFile value {good}"))
            .is_empty()
    );
    let before = network_line(&mut engine);
    assert!(before.contains("good.nnue"), "{before}");
    for (path, reason) in [
        ("/dev/zero", "not a regular file"),
        (fifo.as_str(), "not a regular file"),
        (random.as_str(), "bad magic"),
        (random_weights.as_str(), "beyond the limit"),
        (truncated.as_str(), "expected"),
        (
            beyond.as_str(),
            "input weight 5 is 2000, beyond the limit 1913",
        ),
    ] {
        let started = Instant::now();
        let reply = engine.ask(&format!("setoption name EvalFile value {path}"));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{path}: {:?}",
            started.elapsed()
        );
        assert!(
            reply.len() == 1
                && reply[0].starts_with("info string error: option 'EvalFile': ")
                && reply[0].contains(reason)
                && reply[0].ends_with("network unchanged"),
            "{path}: {reply:?}"
        );
        assert_eq!(network_line(&mut engine), before, "{path}");
        engine.send("go nodes 500");
        engine.expect_line(|l| l.starts_with("bestmove "), Duration::from_secs(20));
    }
}

#[test]
fn an_extreme_network_is_clamped_below_the_win_scores() {
    let dir = scratch_dir("network-extreme");
    // Every hidden unit fully on whatever the position, every output weight
    // and output bias at the largest a trainer makes: the raw output is
    // over three million centi-guards.
    let mut bytes = embedded();
    for index in 0..HIDDEN_VALUES {
        set_i16(
            &mut bytes,
            index,
            if index >= INPUTS * HIDDEN { 1913 } else { 0 },
        );
    }
    for unit in 0..BUCKETS * 2 * HIDDEN {
        set_i16(&mut bytes, HIDDEN_VALUES + unit, 16384);
    }
    let biases = bytes.len() - 4 * BUCKETS;
    for bias in bytes[biases..].chunks_exact_mut(4) {
        bias.copy_from_slice(&(32 * 255 * 512i32).to_le_bytes());
    }
    let path = dir.join("extreme.nnue");
    std::fs::write(&path, &bytes).unwrap();

    let mut engine = Agon::start(&[]);
    assert!(
        engine
            .ask(&format!("setoption name EvalFile value {}", path.display()))
            .is_empty()
    );
    let line = network_line(&mut engine);
    let score: i64 = line
        .split(' ')
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((1..=16_000).contains(&score), "{line}");
    engine.send("go depth 3");
    let lines = engine.lines_until(|l| l.starts_with("bestmove "), Duration::from_secs(30));
    let scored: Vec<&String> = lines.iter().filter(|l| l.contains(" score ")).collect();
    assert!(!scored.is_empty(), "{lines:?}");
    for line in scored {
        assert!(
            line.contains(" score cp ") && !line.contains(" mate "),
            "a static evaluation read as a win: {line}"
        );
    }
}
