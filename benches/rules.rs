//! Criterion benchmarks of the rules core: move generation, making moves,
//! and perft, on the start position and a crowded middle-game position.

use agon::rules::perft::perft;
use agon::rules::{Position, START_FEN, count_legal, legal_moves, parse_fen};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const CROWDED: &str = "6/7/2G5/1q3G3/5G4/3gGQg*G1g1/6g3/5g3/2g5/2G4/6 b";

fn positions() -> [(&'static str, Position); 2] {
    [
        ("start", parse_fen(START_FEN).unwrap()),
        ("crowded", parse_fen(CROWDED).unwrap()),
    ]
}

fn move_generation(c: &mut Criterion) {
    for (name, position) in positions() {
        c.bench_function(&format!("legal_moves/{name}"), |b| {
            b.iter(|| legal_moves(black_box(&position)).len())
        });
        c.bench_function(&format!("count_legal/{name}"), |b| {
            b.iter(|| count_legal(black_box(&position)))
        });
    }
}

fn make_move(c: &mut Criterion) {
    for (name, position) in positions() {
        let moves = legal_moves(&position);
        c.bench_function(&format!("make_move_all/{name}"), |b| {
            b.iter(|| {
                moves
                    .iter()
                    .map(|&mv| black_box(&position).make_move(mv).key())
                    .fold(0u64, |acc, key| acc ^ key)
            })
        });
    }
}

fn perft_bench(c: &mut Criterion) {
    let start = parse_fen(START_FEN).unwrap();
    c.bench_function("perft/start/4", |b| b.iter(|| perft(black_box(&start), 4)));
}

criterion_group!(benches, move_generation, make_move, perft_bench);
criterion_main!(benches);
