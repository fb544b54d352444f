//! The cost of saving a match state after the 10,000th game of a long run
//! (an SPRT of realistic games: 120 plies with scores, depths and times,
//! played four at a time, so that up to three finished games wait for an
//! earlier one).

use agon::rules::Color;
use agon::tools::match_runner::options::{Request, parse};
use agon::tools::match_runner::record::{
    Ending, GameRecord, MoveRecord, RecordLengths, ScoreRecord, Verdict,
};
use agon::tools::match_runner::schedule::Standing;
use agon::tools::match_runner::state::SavedState;
use criterion::{Criterion, criterion_group, criterion_main};

const GAMES: u64 = 10_000;

fn game(number: u64) -> GameRecord {
    let moves = (0..120)
        .map(|ply| MoveRecord {
            text: format!(
                "{}{}{}{}",
                ['a', 'f', 'k'][ply % 3],
                ply % 11 + 1,
                ['b', 'g'][ply % 2],
                ply % 9 + 1
            ),
            score: Some(ScoreRecord::Cp((ply as i32 * 7) % 90 - 45)),
            depth: Some(10 + (ply % 6) as u32),
            time_ms: 80 + (ply as u64 * 13) % 60,
        })
        .collect();
    GameRecord {
        game: number,
        round: number.div_ceil(2),
        white: "new".into(),
        black: "old".into(),
        result: [
            Verdict::Win(Color::White),
            Verdict::Draw,
            Verdict::Win(Color::Black),
        ][number as usize % 3],
        termination: Ending::Formation,
        reason: "white wins by formation".into(),
        fen: "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1".into(),
        book: vec!["b1a1".into(), "d1d2".into(), "j5i5".into(), "a2b2".into()],
        moves,
        white_time_control: "10+0.1".into(),
        black_time_control: "10+0.1".into(),
        final_fen: "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q b 61".into(),
        date: "2026.12.01".into(),
    }
}

fn save_after_10000_games(c: &mut Criterion) {
    let args: Vec<String> = "-engine cmd=agon name=new -engine cmd=agon-old name=old \
        -each tc=10+0.1 -games 2 -rounds 100000 -repeat -concurrency 4 \
        -sprt elo0=0 elo1=5 -jsonl games.jsonl -state state.json"
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let Ok(Request::Run(config)) = parse(&args) else {
        panic!("the run's command line parses");
    };
    let mut standing = Standing::default();
    for number in 1..=GAMES {
        standing.add(&config, &game(number));
    }
    let state = SavedState {
        args,
        seed: 1,
        shard: None,
        recorded_through: GAMES,
        recorded_beyond: Vec::new(),
        record_lengths: RecordLengths {
            pgn: 0,
            jsonl: 74_000_000,
        },
        standing,
        pending: (GAMES + 2..=GAMES + 4).map(game).collect(),
    };
    let dir = std::env::temp_dir().join(format!("agon-state-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.json");
    state.save(&path).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    println!("state after {GAMES} games: {size} bytes");
    let mut group = c.benchmark_group("match_state");
    group.sample_size(10);
    group.bench_function("save_after_10000_games", |b| {
        b.iter(|| state.save(&path).unwrap())
    });
    group.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, save_after_10000_games);
criterion_main!(benches);
