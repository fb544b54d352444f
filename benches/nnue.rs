//! Speed of the learned evaluation: bringing an accumulator up to date
//! after a move, a full refresh, and the output from an accumulator; and
//! the inner loops at each instruction level this machine runs.

use agon::rules::{START_FEN, legal_moves, parse_fen};
use agon::search::nnue::simd::{self, Level, Units};
use agon::search::nnue::{Accumulator, Network};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn nnue(c: &mut Criterion) {
    let network = Network::embedded();
    let position = parse_fen(START_FEN).unwrap();
    let step = position.make_move(legal_moves(&position).as_slice()[0]);
    // A step that captures: two cells move and one piece turns captured.
    let before = parse_fen("6/7/8/9/10/11/2Gg6/4G4/8/7/q5 w").unwrap();
    let capture = legal_moves(&before)
        .iter()
        .map(|&mv| before.make_move(mv))
        .find(|after| after.captured(agon::rules::Color::Black) != 0)
        .expect("a capturing move");
    let accumulator = Accumulator::refresh(network, &position);
    let capture_start = Accumulator::refresh(network, &before);

    c.bench_function("nnue accumulator update (step)", |b| {
        b.iter(|| {
            let mut next = Accumulator::EMPTY;
            next.update_from(
                &accumulator,
                network,
                black_box(&position),
                black_box(&step),
            );
            next
        })
    });
    c.bench_function("nnue accumulator update (capture)", |b| {
        b.iter(|| {
            let mut next = Accumulator::EMPTY;
            next.update_from(
                &capture_start,
                network,
                black_box(&before),
                black_box(&capture),
            );
            next
        })
    });
    c.bench_function("nnue accumulator refresh", |b| {
        b.iter(|| Accumulator::refresh(network, black_box(&position)))
    });
    c.bench_function("nnue evaluation from an accumulator", |b| {
        b.iter(|| network.evaluate(black_box(&accumulator), &position))
    });
    c.bench_function("hand-written evaluation", |b| {
        b.iter(|| {
            agon::search::eval::evaluate(black_box(&position), &agon::search::eval::FULL_PERCENTS)
        })
    });
}

/// One move's work (two rows removed, two added, as a step changes two
/// cells for each view) and one view's output, per level.
fn levels(c: &mut Criterion) {
    let rows: Vec<Units> = (0..5)
        .map(|row| std::array::from_fn(|unit| ((row * 131 + unit * 17) % 401) as i16 - 200))
        .collect();
    for level in Level::available() {
        c.bench_function(&format!("nnue apply 2+2 rows ({level:?})"), |b| {
            b.iter(|| {
                let mut values = [0; agon::search::nnue::HIDDEN];
                simd::apply(
                    level,
                    &rows[0],
                    &mut values,
                    &[&rows[1], &rows[2]],
                    black_box(&[&rows[3], &rows[4]]),
                );
                values
            })
        });
        c.bench_function(&format!("nnue clipped dot ({level:?})"), |b| {
            b.iter(|| simd::clipped_dot(level, black_box(&rows[0]), black_box(&rows[1])))
        });
    }
}

criterion_group!(benches, nnue, levels);
criterion_main!(benches);
