//! `agon train`: fits a network to `agon datagen` records. The inputs are
//! sparse (at most 16 of 728 per view), so the trainer is written for them:
//! a forward pass adds the rows of the active inputs, and the backward pass
//! touches only those rows; the batch is split over threads, each with its
//! own gradient, and Adam updates the weights. The float network is then
//! quantised into the engine's format.

use super::datagen::{RECORD_SIZE, Record};
use crate::rules::Position;
use crate::search::nnue::{HIDDEN, INPUTS, Network, QA, QB, SCALE, features};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Most active inputs of one view.
const MAX_FEATURES: usize = 16;
/// Hidden-layer weights and biases are kept within this, so that no sum of
/// 17 of them, scaled by [`QA`], can overflow the engine's i16 accumulator.
const INPUT_WEIGHT_LIMIT: f32 = 7.5;
/// Output weights are kept within this, so that scaled by [`QB`] they fit
/// an i16 and the output sum of 256 clipped units fits an i32.
const OUTPUT_WEIGHT_LIMIT: f32 = 32.0;

/// How to train.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Positions per gradient step.
    pub batch_size: usize,
    /// Adam's step size in the first epoch.
    pub learning_rate: f32,
    /// The step size is multiplied by this after every epoch.
    pub learning_rate_decay: f32,
    /// Weight of the game result in the target; the rest is the search
    /// score.
    pub result_weight: f32,
    /// Share of the positions held out for the validation loss.
    pub validation_share: f64,
    /// Seed of the initial weights, the split and the order of positions.
    pub seed: u64,
    /// Threads sharing each batch.
    pub threads: usize,
    /// Where the network is written (after every epoch).
    pub output: PathBuf,
}

/// A training position: the active inputs of both views (side to move's
/// first) and the target.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    inputs: [[u16; MAX_FEATURES]; 2],
    counts: [u8; 2],
    target: f32,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Sample {
    /// The sample of `record`, its target blending the search score (as
    /// an expected result) and the game result.
    pub fn new(record: &Record, result_weight: f32) -> Sample {
        let side = record.position.side_to_move();
        let mut inputs = [[0u16; MAX_FEATURES]; 2];
        let mut counts = [0u8; 2];
        for (view, color) in [side, !side].into_iter().enumerate() {
            for (slot, input) in features(&record.position, color)
                .take(MAX_FEATURES)
                .enumerate()
            {
                inputs[view][slot] = input as u16;
                counts[view] = slot as u8 + 1;
            }
        }
        let score = sigmoid(f32::from(record.score) / SCALE as f32);
        let result = f32::from(record.result) / 2.0;
        Sample {
            inputs,
            counts,
            target: (1.0 - result_weight) * score + result_weight * result,
        }
    }

    fn view(&self, view: usize) -> &[u16] {
        &self.inputs[view][..usize::from(self.counts[view])]
    }
}

/// The network in floating point, as trained.
#[derive(Clone, Debug)]
pub struct FloatNetwork {
    input_weights: Vec<[f32; HIDDEN]>,
    input_bias: [f32; HIDDEN],
    output_weights: [f32; 2 * HIDDEN],
    output_bias: f32,
}

/// The hidden layer of both views for one sample.
struct Hidden {
    sums: [[f32; HIDDEN]; 2],
}

impl FloatNetwork {
    /// Small random weights from `rng`.
    pub fn random(rng: &mut StdRng) -> FloatNetwork {
        FloatNetwork {
            input_weights: (0..INPUTS)
                .map(|_| std::array::from_fn(|_| rng.random_range(-0.15..0.15)))
                .collect(),
            input_bias: std::array::from_fn(|_| rng.random_range(0.0..0.5)),
            output_weights: std::array::from_fn(|_| rng.random_range(-0.1..0.1)),
            output_bias: 0.0,
        }
    }

    fn zero() -> FloatNetwork {
        FloatNetwork {
            input_weights: vec![[0.0; HIDDEN]; INPUTS],
            input_bias: [0.0; HIDDEN],
            output_weights: [0.0; 2 * HIDDEN],
            output_bias: 0.0,
        }
    }

    fn hidden(&self, sample: &Sample) -> Hidden {
        let mut sums = [self.input_bias; 2];
        for (view, sum) in sums.iter_mut().enumerate() {
            for &input in sample.view(view) {
                for (value, weight) in sum.iter_mut().zip(&self.input_weights[usize::from(input)]) {
                    *value += weight;
                }
            }
        }
        Hidden { sums }
    }

    /// The raw output (centi-guards / [`SCALE`]).
    fn output(&self, hidden: &Hidden) -> f32 {
        let mut total = self.output_bias;
        for (view, sum) in hidden.sums.iter().enumerate() {
            let weights = &self.output_weights[view * HIDDEN..(view + 1) * HIDDEN];
            for (value, weight) in sum.iter().zip(weights) {
                total += value.clamp(0.0, 1.0) * weight;
            }
        }
        total
    }

    /// The evaluation of `position` in centi-guards, side to move's view:
    /// the float reference of the engine's integer inference.
    pub fn evaluate(&self, position: &Position) -> f32 {
        let record = Record {
            position: *position,
            score: 0,
            ply: 0,
            result: 1,
        };
        self.output(&self.hidden(&Sample::new(&record, 0.0))) * SCALE as f32
    }

    /// The squared error of `sample`, adding its gradient to `gradient`
    /// when given.
    fn loss(&self, sample: &Sample, gradient: Option<&mut FloatNetwork>) -> f32 {
        let hidden = self.hidden(sample);
        let predicted = sigmoid(self.output(&hidden));
        let error = predicted - sample.target;
        if let Some(gradient) = gradient {
            let slope = 2.0 * error * predicted * (1.0 - predicted);
            gradient.output_bias += slope;
            for (view, sum) in hidden.sums.iter().enumerate() {
                let offset = view * HIDDEN;
                let mut back = [0.0f32; HIDDEN];
                for unit in 0..HIDDEN {
                    let value = sum[unit];
                    gradient.output_weights[offset + unit] += slope * value.clamp(0.0, 1.0);
                    if value > 0.0 && value < 1.0 {
                        back[unit] = slope * self.output_weights[offset + unit];
                    }
                }
                for (bias, delta) in gradient.input_bias.iter_mut().zip(&back) {
                    *bias += delta;
                }
                for &input in sample.view(view) {
                    let row = &mut gradient.input_weights[usize::from(input)];
                    for (weight, delta) in row.iter_mut().zip(&back) {
                        *weight += delta;
                    }
                }
            }
        }
        error * error
    }

    fn parameters_mut(&mut self) -> impl Iterator<Item = (&mut f32, f32)> {
        let inputs = self
            .input_weights
            .iter_mut()
            .flatten()
            .chain(self.input_bias.iter_mut())
            .map(|value| (value, INPUT_WEIGHT_LIMIT));
        let outputs = self
            .output_weights
            .iter_mut()
            .chain(std::iter::once(&mut self.output_bias))
            .map(|value| (value, OUTPUT_WEIGHT_LIMIT));
        inputs.chain(outputs)
    }

    fn parameters(&self) -> impl Iterator<Item = f32> + '_ {
        self.input_weights
            .iter()
            .flatten()
            .chain(&self.input_bias)
            .chain(&self.output_weights)
            .chain(std::iter::once(&self.output_bias))
            .copied()
    }

    fn add(&mut self, other: &FloatNetwork) {
        let values: Vec<f32> = other.parameters().collect();
        for ((value, _), delta) in self.parameters_mut().zip(values) {
            *value += delta;
        }
    }

    fn clear(&mut self) {
        for (value, _) in self.parameters_mut() {
            *value = 0.0;
        }
    }

    /// The engine's integer network (weights rounded to their scales).
    pub fn quantise(&self, name: &str) -> Network {
        let round = |value: f32, scale: i32| -> i16 {
            (value * scale as f32)
                .round()
                .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
        };
        let input_weights = self
            .input_weights
            .iter()
            .map(|row| std::array::from_fn(|unit| round(row[unit], QA)))
            .collect();
        let input_bias = std::array::from_fn(|unit| round(self.input_bias[unit], QA));
        let output_weights = std::array::from_fn(|unit| round(self.output_weights[unit], QB));
        let output_bias = (self.output_bias * (QA * QB) as f32).round() as i32;
        Network::from_parts(input_weights, input_bias, output_weights, output_bias, name)
            .expect("the float network has the engine's shape")
    }
}

/// Adam's running moments.
struct Adam {
    first: Vec<f32>,
    second: Vec<f32>,
    steps: i32,
}

impl Adam {
    const BETA1: f32 = 0.9;
    const BETA2: f32 = 0.999;
    const EPSILON: f32 = 1e-8;

    fn new(parameters: usize) -> Adam {
        Adam {
            first: vec![0.0; parameters],
            second: vec![0.0; parameters],
            steps: 0,
        }
    }

    fn step(&mut self, network: &mut FloatNetwork, gradient: &FloatNetwork, rate: f32) {
        self.steps += 1;
        let correction1 = 1.0 - Self::BETA1.powi(self.steps);
        let correction2 = 1.0 - Self::BETA2.powi(self.steps);
        let parameters = network.parameters_mut();
        let gradients = gradient.parameters();
        for (((value, limit), grad), (first, second)) in parameters
            .zip(gradients)
            .zip(self.first.iter_mut().zip(self.second.iter_mut()))
        {
            *first = Self::BETA1 * *first + (1.0 - Self::BETA1) * grad;
            *second = Self::BETA2 * *second + (1.0 - Self::BETA2) * grad * grad;
            let update =
                rate * (*first / correction1) / ((*second / correction2).sqrt() + Self::EPSILON);
            *value = (*value - update).clamp(-limit, limit);
        }
    }
}

/// The mean loss over `samples`, spread over `threads`.
fn mean_loss(network: &FloatNetwork, samples: &[Sample], threads: usize) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    summed_loss(network, samples, threads, None) / samples.len() as f64
}

/// The summed loss over `samples` cut into one part per thread (see
/// [`part_size`]); with `gradients`, each part's gradient is also summed
/// into that thread's own slot, cleared first. A thread that panicked is a
/// trainer bug: the panic goes on rather than a part silently counting 0.
fn summed_loss(
    network: &FloatNetwork,
    samples: &[Sample],
    threads: usize,
    gradients: Option<&mut [FloatNetwork]>,
) -> f64 {
    let mut slots = gradients.map(|gradients| gradients.iter_mut());
    std::thread::scope(|scope| {
        let handles: Vec<_> = samples
            .chunks(part_size(samples.len(), threads))
            .map(|part| {
                let mut gradient = slots.as_mut().and_then(Iterator::next);
                scope.spawn(move || {
                    if let Some(gradient) = gradient.as_deref_mut() {
                        gradient.clear();
                    }
                    part.iter()
                        .map(|sample| f64::from(network.loss(sample, gradient.as_deref_mut())))
                        .sum::<f64>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .sum()
    })
}

/// The length of each thread's part of `len` samples.
fn part_size(len: usize, threads: usize) -> usize {
    len.div_ceil(threads.max(1)).max(1)
}

/// The losses of one epoch.
#[derive(Clone, Copy, Debug)]
pub struct EpochLoss {
    /// Mean loss over the training positions, as trained.
    pub train: f64,
    /// Mean loss over the held-out positions after the epoch.
    pub validation: f64,
}

/// Why training failed.
#[derive(Debug)]
pub enum TrainError {
    /// A record file could not be read.
    Data(super::datagen::DatagenError),
    /// The files hold no record.
    NoRecords,
    /// The network file could not be written.
    WriteNetwork {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The loss lines could not be written.
    Output(std::io::Error),
}

impl std::fmt::Display for TrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrainError::Data(error) => write!(f, "{error}"),
            TrainError::NoRecords => write!(f, "no records to train on"),
            TrainError::WriteNetwork { path, error } => {
                write!(f, "cannot write {}: {error}", path.display())
            }
            TrainError::Output(error) => write!(f, "cannot write the losses: {error}"),
        }
    }
}

impl std::error::Error for TrainError {}

/// Trains on `samples` (already split), returning the network and the
/// loss of each epoch; writes one line per epoch to `out` and progress to
/// `progress` every `interval`.
pub fn fit(
    train: &mut [Sample],
    validation: &[Sample],
    settings: &TrainSettings,
    out: &mut dyn Write,
    progress: &mut dyn Write,
    interval: Duration,
) -> Result<(FloatNetwork, Vec<EpochLoss>), TrainError> {
    let threads = settings.threads.max(1);
    let mut rng = StdRng::seed_from_u64(settings.seed);
    let mut network = FloatNetwork::random(&mut rng);
    let mut adam = Adam::new(network.parameters().count());
    let mut gradients: Vec<FloatNetwork> = (0..threads).map(|_| FloatNetwork::zero()).collect();
    let mut total = FloatNetwork::zero();
    let mut rate = settings.learning_rate;
    let mut losses = Vec::new();
    let write = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(TrainError::Output)
    };
    write(
        out,
        format!(
            "epoch 0 validation loss {:.6}",
            mean_loss(&network, validation, threads)
        ),
    )?;
    let batch_size = settings.batch_size.max(1);
    for epoch in 1..=settings.epochs {
        let started = Instant::now();
        let mut last = Instant::now();
        train.shuffle(&mut rng);
        let batches = train.len().div_ceil(batch_size);
        let mut loss_sum = 0.0f64;
        for (index, batch) in train.chunks(batch_size).enumerate() {
            loss_sum += summed_loss(&network, batch, threads, Some(&mut gradients));
            total.clear();
            let used = batch.len().div_ceil(part_size(batch.len(), threads));
            for gradient in gradients.iter().take(used) {
                total.add(gradient);
            }
            let scale = 1.0 / batch.len() as f32;
            for (value, _) in total.parameters_mut() {
                *value *= scale;
            }
            adam.step(&mut network, &total, rate);
            if last.elapsed() >= interval {
                last = Instant::now();
                let _ = writeln!(
                    progress,
                    "epoch {epoch}/{} batch {}/{batches} loss {:.6} ({:.0} positions/s)",
                    settings.epochs,
                    index + 1,
                    loss_sum / ((index + 1) * batch_size).min(train.len()) as f64,
                    ((index + 1) * batch_size) as f64 / started.elapsed().as_secs_f64()
                );
            }
        }
        let loss = EpochLoss {
            train: loss_sum / train.len().max(1) as f64,
            validation: mean_loss(&network, validation, threads),
        };
        losses.push(loss);
        write(
            out,
            format!(
                "epoch {epoch} train loss {:.6} validation loss {:.6} rate {rate:.6} ({:.1}s)",
                loss.train,
                loss.validation,
                started.elapsed().as_secs_f64()
            ),
        )?;
        std::fs::write(
            &settings.output,
            network
                .quantise(&settings.output.display().to_string())
                .to_bytes(),
        )
        .map_err(|error| TrainError::WriteNetwork {
            path: settings.output.clone(),
            error,
        })?;
        rate *= settings.learning_rate_decay;
    }
    Ok((network, losses))
}

/// Splits `records` into training and validation samples by a seeded
/// shuffle.
pub fn split(records: &[Record], settings: &TrainSettings) -> (Vec<Sample>, Vec<Sample>) {
    let mut samples: Vec<Sample> = records
        .iter()
        .map(|record| Sample::new(record, settings.result_weight))
        .collect();
    let mut rng = StdRng::seed_from_u64(settings.seed ^ 0x5EED_5917);
    samples.shuffle(&mut rng);
    let held = ((samples.len() as f64) * settings.validation_share).round() as usize;
    let validation = samples.split_off(samples.len() - held.min(samples.len()));
    (samples, validation)
}

/// The loss of the hand-written evaluation on the validation positions
/// (the same split as [`split`]).
fn hand_loss(records: &[Record], settings: &TrainSettings) -> f64 {
    let mut order: Vec<usize> = (0..records.len()).collect();
    let mut rng = StdRng::seed_from_u64(settings.seed ^ 0x5EED_5917);
    order.shuffle(&mut rng);
    let held = ((records.len() as f64) * settings.validation_share).round() as usize;
    let percent = crate::search::eval::FULL_PERCENTS;
    let validation = &order[records.len() - held.min(records.len())..];
    let total: f64 = validation
        .iter()
        .map(|&index| {
            let record = &records[index];
            let sample = Sample::new(record, settings.result_weight);
            let score = crate::search::eval::evaluate(&record.position, &percent);
            let error = f64::from(sigmoid(score as f32 / SCALE as f32) - sample.target);
            error * error
        })
        .sum();
    total / validation.len().max(1) as f64
}

/// `agon train`: reads the record files, trains, writes the network.
///
/// # Errors
///
/// Why, when a file cannot be read or written, or the files hold no
/// records.
pub fn run(
    files: &[PathBuf],
    settings: &TrainSettings,
    out: &mut dyn Write,
) -> Result<(), TrainError> {
    let mut records = Vec::new();
    for file in files {
        let before = records.len();
        records.extend(super::datagen::read_records(file).map_err(TrainError::Data)?);
        let _ = writeln!(
            std::io::stderr(),
            "{}: {} records",
            file.display(),
            records.len() - before
        );
    }
    if records.is_empty() {
        return Err(TrainError::NoRecords);
    }
    let (mut train, validation) = split(&records, settings);
    writeln!(
        out,
        "the hand-written evaluation's validation loss, for reference: {:.6}",
        hand_loss(&records, settings)
    )
    .map_err(TrainError::Output)?;
    drop(records);
    writeln!(
        out,
        "training on {} positions, validating on {} ({} bytes of records each)",
        train.len(),
        validation.len(),
        RECORD_SIZE
    )
    .map_err(TrainError::Output)?;
    fit(
        &mut train,
        &validation,
        settings,
        out,
        &mut std::io::stderr(),
        Duration::from_secs(10),
    )?;
    writeln!(out, "network written to {}", settings.output.display()).map_err(TrainError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_fen;
    use crate::tools::bench::bench_fens;

    #[test]
    fn integer_inference_agrees_with_the_float_network() {
        let mut rng = StdRng::seed_from_u64(7);
        let float = FloatNetwork::random(&mut rng);
        let network = float.quantise("test");
        let mut worst = 0.0f32;
        for fen in bench_fens() {
            let position = parse_fen(&fen).unwrap();
            let reference = float.evaluate(&position);
            let integer = network.evaluate_position(&position) as f32;
            worst = worst.max((reference - integer).abs());
        }
        eprintln!("worst difference {worst}");
        assert!(worst <= 4.0, "worst difference {worst} centi-guards");
    }
}
