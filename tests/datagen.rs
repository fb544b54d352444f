//! End-to-end tests of `agon datagen` and `agon train` through the binary:
//! records appended across runs, progress on stderr, runs stopped by
//! signals and kills and continued with no game lost or doubled, seeds and
//! shards that share no game, `--stats`, a network that the engine loads
//! with `EvalFile`, training that lowers the validation loss, and games
//! against opponent networks, recorded for both sides and replayable, and
//! opponents that search deeper than the learning side.

mod common;
use common::{AGON, Agon, run_agon, scratch_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes per record (protocol.md, "Training records").
const RECORD_SIZE: u64 = 26;

/// The arguments of a small datagen run on two game threads.
fn datagen_args<'a>(path: &'a str, seed: &'a str) -> Vec<&'a str> {
    datagen_args_on(path, seed, "2")
}

/// The arguments of a small datagen run on `threads` game threads.
fn datagen_args_on<'a>(path: &'a str, seed: &'a str, threads: &'a str) -> Vec<&'a str> {
    vec![
        "datagen",
        "--output",
        path,
        "--nodes",
        "300",
        "--threads",
        threads,
        "--seed",
        seed,
    ]
}

/// Runs datagen with `args`, which must succeed; returns its stderr.
fn run_datagen(args: &[&str]) -> String {
    let run = run_agon(args);
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    stderr
}

/// Runs datagen until the file holds `games` games; returns its stderr.
fn datagen_with(path: &str, games: &str, seed: &str, extra: &[&str]) -> String {
    let mut args = datagen_args(path, seed);
    args.extend(["--games", games]);
    args.extend(extra);
    run_datagen(&args)
}

fn datagen(path: &str, games: &str, seed: &str) -> String {
    datagen_with(path, games, seed, &[])
}

/// `agon datagen --stats` over `files`: (positions, games, distinct
/// positions, distinct games) of the files together.
fn stats(files: &[&str]) -> [u64; 4] {
    let mut args = vec!["datagen", "--stats"];
    args.extend(files);
    let run = run_agon(&args);
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default().to_string();
    let number_after = |label: &str| -> u64 {
        last.split(&format!(" {label} "))
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{label}' in {stdout}"))
    };
    [
        number_after("positions"),
        number_after("games"),
        number_after("distinct positions"),
        number_after("distinct games"),
    ]
}

fn size(path: &str) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Starts an endless datagen run and waits until it has written a game.
fn start_until_a_game(path: &str) -> std::process::Child {
    let before = size(path);
    let child = Command::new(AGON)
        .args(datagen_args(path, "4"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while size(path) <= before {
        assert!(Instant::now() < deadline, "no game written");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn signals_and_kills_stop_datagen_with_no_torn_record_and_no_game_twice() {
    let dir = scratch_dir("datagen-signals");
    let data = dir.join("games.bin");
    let data = data.to_str().unwrap();

    // SIGTERM: the searches stop at once, the games in progress are dropped,
    // a last line says so, and the status is 1 as for a match.
    let child = start_until_a_game(data);
    let started = Instant::now();
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: interrupted after ") && last.contains("in progress dropped"),
        "{stderr}"
    );
    assert!(size(data).is_multiple_of(RECORD_SIZE), "{}", size(data));

    // SIGKILL: whatever it leaves, the next run drops a torn record and
    // plays new games.
    let mut child = start_until_a_game(data);
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = size(data);
    let goal = (stats(&[data])[1] + 2).to_string();
    let mut args = datagen_args(data, "4");
    args.extend(["--games", &goal]);
    let run = run_agon(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let whole = killed / RECORD_SIZE * RECORD_SIZE;
    assert!(
        size(data) >= whole && size(data).is_multiple_of(RECORD_SIZE),
        "{killed} -> {}",
        size(data)
    );
    let [positions, games, _, distinct_games] = stats(&[data]);
    assert_eq!(positions * RECORD_SIZE, size(data));
    assert!(games >= 2, "{games} games");
    assert_eq!(distinct_games, games, "a game was played twice");
}

#[test]
fn neighbouring_seeds_share_no_game() {
    let dir = scratch_dir("datagen-seeds");
    let eleven = dir.join("eleven.bin");
    let twelve = dir.join("twelve.bin");
    let (eleven, twelve) = (eleven.to_str().unwrap(), twelve.to_str().unwrap());
    datagen(eleven, "8", "11");
    datagen(twelve, "8", "12");
    let [positions, games, distinct_positions, distinct_games] = stats(&[eleven, twelve]);
    assert_eq!(games, 16);
    assert_eq!(distinct_games, 16, "seeds 11 and 12 played the same games");
    // Different games may meet a position now and then, not wholesale.
    assert!(
        distinct_positions * 10 > positions * 9,
        "{distinct_positions} distinct of {positions}"
    );
}

#[test]
fn shards_of_one_command_write_their_own_files_and_share_no_game() {
    let dir = scratch_dir("datagen-shards");
    let data = dir.join("data.bin");
    let data = data.to_str().unwrap();
    datagen_with(data, "9", "5", &["--shard", "1/2"]);
    let second = dir.join("data.shard-2-of-2.bin");
    let run = Command::new(AGON)
        .args(datagen_args(data, "5"))
        .args(["--games", "9", "--shard", "auto/2"])
        .env("AGON_SHARD_INDEX", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success() && stderr.contains("shard 2/2"),
        "{stderr}"
    );
    let first = dir.join("data.shard-1-of-2.bin");
    assert!(!Path::new(data).exists());
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
    let [_, games, _, distinct_games] = stats(&[first, second]);
    assert_eq!((games, distinct_games), (9, 9));
    assert_eq!(stats(&[first])[1], 4, "shard 1 makes its share, 4 of 9");

    // The same command again (a requeued task) finds its share made.
    let again = datagen_with(data, "9", "5", &["--shard", "1/2"]);
    assert!(
        again.lines().last().unwrap().starts_with("games 0 "),
        "{again}"
    );
    assert_eq!(stats(&[first, second])[1], 9);
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
    // appends its own games up to the new goal.
    std::fs::OpenOptions::new()
        .append(true)
        .open(data)
        .and_then(|mut file| std::io::Write::write_all(&mut file, &[1, 2, 3]))
        .unwrap();
    let second = datagen(data, "24", "1");
    assert!(
        second.contains(&format!("({positions} records already)")),
        "{second}"
    );
    let grown = std::fs::metadata(data).unwrap().len();
    assert!(
        grown > size && grown.is_multiple_of(RECORD_SIZE),
        "{size} -> {grown}"
    );
    assert!(
        second.lines().last().unwrap().starts_with("games 12 "),
        "{second}"
    );
    let [positions, games, _, distinct_games] = stats(&[data]);
    assert_eq!(
        (positions * RECORD_SIZE, games, distinct_games),
        (grown, 24, 24)
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
}

/// The sides to move (0 White, 1 Black) of `path`'s records, one list per
/// game (a run of rising ply).
fn sides_by_game(path: &str) -> Vec<Vec<u8>> {
    let mut games: Vec<Vec<u8>> = Vec::new();
    let mut last_ply = None;
    for record in std::fs::read(path)
        .unwrap()
        .chunks_exact(RECORD_SIZE as usize)
    {
        let ply = u16::from_le_bytes([record[22], record[23]]);
        if last_ply.is_none_or(|last| ply <= last) {
            games.push(Vec::new());
        }
        last_ply = Some(ply);
        games.last_mut().unwrap().push(record[24]);
    }
    games
}

#[test]
fn games_against_an_opponent_network_record_both_sides_and_replay_exactly() {
    let dir = scratch_dir("datagen-opponent");
    let opponent = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
    let run = |name: &str| {
        let path = dir.join(name);
        let path = path.to_str().unwrap().to_string();
        // One game thread, so that the records come in the same order.
        let mut args = datagen_args_on(&path, "7", "1");
        args.extend(["--games", "8", "--eval", "network", "--opponent", opponent]);
        let stderr = run_datagen(&args);
        (path, stderr)
    };
    let (first, stderr) = run("first.bin");
    assert!(
        stderr
            .lines()
            .next()
            .unwrap()
            .ends_with(", against 1 opponent network"),
        "{stderr}"
    );
    let learner = learner_results(&stderr);
    assert!(
        learner.len() == 3 && learner.iter().sum::<u64>() == 8,
        "the learning side's results: {stderr}"
    );
    let games = sides_by_game(&first);
    assert_eq!(games.len(), 8, "{games:?}");
    for game in &games {
        assert!(
            game.contains(&0) && game.contains(&1),
            "the opponent's turns are recorded too: {game:?}"
        );
    }
    let (second, _) = run("second.bin");
    assert!(
        std::fs::read(&first).unwrap() == std::fs::read(&second).unwrap(),
        "the same command makes the same records"
    );
}

/// The learning side's wins, draws and losses in a run's last progress line.
fn learner_results(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .last()
        .and_then(|line| line.split(" learner W/D/L ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .map(|counts| counts.split('/').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default()
}

#[test]
fn an_opponent_searching_twenty_times_deeper_wins_most_games() {
    let dir = scratch_dir("datagen-opponent-nodes");
    let opponent = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
    let run = |name: &str, opponent_nodes: Option<&str>| {
        let path = dir.join(name);
        let path = path.to_str().unwrap().to_string();
        let mut args = datagen_args_on(&path, "7", "1");
        let nodes = args.iter().position(|arg| *arg == "--nodes").unwrap() + 1;
        args[nodes] = "100";
        args.extend(["--games", "16", "--eval", "network"]);
        args.extend(["--opponent", opponent]);
        if let Some(nodes) = opponent_nodes {
            args.extend(["--opponent-nodes", nodes]);
        }
        let stderr = run_datagen(&args);
        (path, stderr)
    };
    let (even, _) = run("even.bin", None);
    let (named_even, _) = run("named-even.bin", Some("100"));
    assert!(
        std::fs::read(&even).unwrap() == std::fs::read(&named_even).unwrap(),
        "--opponent-nodes equal to --nodes changes nothing"
    );
    let (_, stderr) = run("deeper.bin", Some("2000"));
    assert!(
        stderr
            .lines()
            .next()
            .unwrap()
            .ends_with(", against 1 opponent network at 2000 nodes/move"),
        "{stderr}"
    );
    let learner = learner_results(&stderr);
    assert!(
        learner.len() == 3 && learner.iter().sum::<u64>() == 16 && learner[2] > 2 * learner[0],
        "the learning side loses most games to an opponent searching 20 times deeper: {stderr}"
    );
}

#[test]
fn datagen_refuses_bad_arguments() {
    let dir = scratch_dir("datagen-bad");
    let data = dir.join("x.bin");
    let data = data.to_str().unwrap();
    let network = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
    // A one-game run to `data` with `bad` among its arguments.
    let one_game = |bad: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["datagen", "--output", data];
        args.extend_from_slice(bad);
        args.extend(["--games", "1"]);
        args
    };
    for args in [
        one_game(&["--threads", "0"]),
        one_game(&["--eval", "magic"]),
        vec![
            "datagen",
            "--output",
            "/nonexistent/dir/x.bin",
            "--games",
            "1",
        ],
        vec!["train", "/nonexistent.bin", "--output", data],
        vec!["datagen", "--stats", "/nonexistent.bin"],
        vec!["datagen", "--output", data, "--shard", "3/2"],
        one_game(&["--opponent", "/nonexistent.nnue"]),
        one_game(&["--opponent", "/dev/null"]),
        one_game(&["--opponent-nodes", "4000"]),
        one_game(&["--opponent", network, "--opponent-nodes", "0"]),
    ] {
        let run = run_agon(&args);
        assert!(!run.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&run.stderr).starts_with("error: "),
            "{args:?}"
        );
    }
    assert!(!Path::new(data).exists(), "a refused run wrote its file");
}

/// Two processes on one file would play the same seeds and write over each
/// other's records: while one holds the file, another is refused and the
/// file is untouched.
#[test]
fn a_second_process_on_the_same_file_is_refused() {
    let dir = scratch_dir("datagen-locked");
    let path = dir.join("data.bin");
    let path_text = path.to_str().unwrap();
    let held = agon::tools::run_lock::RunLock::take(&path).unwrap();
    let mut args = datagen_args(path_text, "1");
    args.extend(["--games", "1"]);
    let run = run_agon(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    assert!(
        stderr.contains("another process is running on it now"),
        "{stderr}"
    );
    assert!(!path.exists() || size(path_text) == 0);
    drop(held);
    datagen(path_text, "1", "1");
}

/// A file given as `--output` that is not a record file (notes, a network
/// named by mistake) is refused before anything is cut from it or added,
/// and stays byte for byte as it was.
#[test]
fn an_output_that_is_not_a_record_file_is_refused_and_left_as_it_is() {
    let dir = scratch_dir("datagen-foreign-output");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "important notes\n").unwrap();
    let network = dir.join("copy.nnue");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue"),
        &network,
    )
    .unwrap();
    for path in [notes, network] {
        let before = std::fs::read(&path).unwrap();
        let mut args = datagen_args(path.to_str().unwrap(), "1");
        args.extend(["--positions", "1", "--seconds", "0"]);
        let run = run_agon(&args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{}: {stderr}", path.display());
        assert!(
            stderr.starts_with("error: ") && stderr.contains("not a record file"),
            "{}: {stderr}",
            path.display()
        );
        assert!(
            std::fs::read(&path).unwrap() == before,
            "{} was changed",
            path.display()
        );
    }
}

/// A --max-plies that the random opening reaches ends every game before a
/// searched position, so nothing would be recorded (a --positions goal
/// never met, a --games goal met by empty games): it is refused at once.
#[test]
fn a_max_plies_within_the_random_opening_is_refused() {
    let dir = scratch_dir("datagen-max-plies");
    let data = dir.join("x.bin");
    let data = data.to_str().unwrap();
    for bad in [
        ["--max-plies", "0", "--games", "5"],
        ["--max-plies", "5", "--positions", "10"],
        ["--max-plies", "7", "--games", "1"],
    ] {
        let mut args = datagen_args(data, "1");
        args.extend(bad);
        let run = run_agon(&args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{bad:?}: {stderr}");
        assert!(
            stderr.starts_with("error: --max-plies") && stderr.contains("more than 7"),
            "{bad:?}: {stderr}"
        );
        assert!(!Path::new(data).exists(), "{bad:?} wrote its file");
    }
    let mut args = datagen_args(data, "1");
    args.extend(["--max-plies", "8", "--games", "1"]);
    run_datagen(&args);
}
